import { Type } from 'typebox';
import { SERVER_PERMISSIONS } from '../../domain/policy.js';
import { currentUser } from '../../http/access.js';
import { Envelope, IdentityProofFields, Nullable, responses } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { MAX_KEYS_PER_USER, type ApiKeysService } from './api-keys.service.js';

const TAGS = ['api-keys'];
const Permission = Type.Union(SERVER_PERMISSIONS.map((permission) => Type.Literal(permission)));
const Timestamp = Type.String({ format: 'date-time' });

const ApiKey = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  prefix: Type.String({ description: 'The first characters of the key, to recognise it by' }),
  createdAt: Timestamp,
  expiresAt: Nullable(Timestamp),
  lastUsedAt: Nullable(Timestamp),
  lastUsedAddress: Nullable(Type.String()),
  servers: Nullable(Type.Array(Type.String())),
  permissions: Nullable(Type.Array(Permission)),
  expired: Type.Boolean(),
});

const CreateBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    expiresAt: Type.Optional(
      Nullable(Type.String({ format: 'date-time', description: 'Absent or null: never' })),
    ),
    servers: Type.Optional(
      Nullable(
        Type.Array(Type.String({ minLength: 1, maxLength: 256 }), {
          maxItems: 1000,
          description: 'The only servers it reaches; absent or null: every server you can reach',
        }),
      ),
    ),
    permissions: Type.Optional(
      Nullable(
        Type.Array(Permission, {
          maxItems: SERVER_PERMISSIONS.length,
          description:
            'The only server permissions it carries, and nothing outside servers but your own account; absent or null: everything you may do',
        }),
      ),
    ),
    ...IdentityProofFields,
  },
  { additionalProperties: false },
);

const KeyParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }) });

/**
 * One's own API keys. Only in a signed-in session: a request made with a key gets 403
 * `SESSION_REQUIRED` here, so a key cannot make or revoke keys.
 */
export function apiKeysRoutes(app: App, keys: ApiKeysService): void {
  const sessionOnly = { sessionOnly: true };

  app.get(
    '/api/profile/api-keys',
    {
      config: sessionOnly,
      schema: {
        tags: TAGS,
        summary: 'Your API keys, newest first, with their last use',
        response: responses(Envelope(Type.Array(ApiKey)), 401, 403),
      },
    },
    async (request) => ({ message: 'API keys', data: await keys.list(currentUser(request)) }),
  );

  app.post(
    '/api/profile/api-keys',
    {
      config: sessionOnly,
      schema: {
        tags: TAGS,
        summary: 'Make an API key: answered this once, stored only hashed',
        description: `Send it as \`Authorization: Bearer gpk_…\`. Asks for the password (400 when missing, 403 WRONG_PASSWORD when wrong) and, with two-factor sign-in on, a code (401 INVALID_CREDENTIALS when wrong); both counted like failed logins (429). An account without a password must have signed in within 10 minutes (403 SIGN_IN_AGAIN). 400 for an expiry in the past or a server you cannot reach; 409 past ${MAX_KEYS_PER_USER} keys.`,
        body: CreateBody,
        response: responses(
          Envelope(
            Type.Object({
              key: ApiKey,
              token: Type.String({ description: 'The key itself: shown this once' }),
            }),
          ),
          400,
          401,
          403,
          409,
          429,
        ),
      },
    },
    async (request) => ({
      message: 'API key created: copy it now',
      data: await keys.create(currentUser(request), request.body, request.ip),
    }),
  );

  app.delete(
    '/api/profile/api-keys/:id',
    {
      config: sessionOnly,
      schema: {
        tags: TAGS,
        summary: 'Revoke one of your API keys, at once',
        description:
          'Requests made with it are refused from now on, its console sockets close (4401) and its download links stop working.',
        params: KeyParams,
        response: responses(Envelope(Type.Object({ id: Type.Integer() })), 400, 401, 403, 404),
      },
    },
    async (request) => {
      await keys.revoke(currentUser(request), request.params.id);
      return { message: 'API key revoked', data: { id: request.params.id } };
    },
  );
}
