import { Type, type TSchema } from 'typebox';
import { currentUser } from '../../http/access.js';
import { errorResponses, responses } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import {
  NewSshKeyBody,
  SshKeyEnvelope,
  SshKeyListEnvelope,
  SshKeyParams,
} from './ssh-keys.schemas.js';
import { MAX_SSH_KEYS_PER_USER, type SshKeysService } from './ssh-keys.service.js';

const TAGS = ['ssh-keys'];

/** The response schemas of a route that answers 201 with `ok` (see `responses`). */
const created = <T extends TSchema>(ok: T, ...errors: readonly number[]) =>
  ({ 201: ok, ...errorResponses(...errors) }) as { 201: T } & Record<number, TSchema>;

/**
 * One's own SSH public keys, for SFTP. Only in a signed-in session: a request made with an API key
 * gets 403 `SESSION_REQUIRED` here, so a key cannot add a lasting credential.
 */
export function sshKeysRoutes(app: App, keys: SshKeysService): void {
  const sessionOnly = { sessionOnly: true };

  app.get(
    '/api/profile/ssh-keys',
    {
      config: sessionOnly,
      schema: {
        tags: TAGS,
        summary: 'Your SSH public keys for SFTP, oldest first, with their last use',
        response: responses(SshKeyListEnvelope, 401, 403),
      },
    },
    async (request) => ({ message: 'SSH keys', data: await keys.list(currentUser(request)) }),
  );

  app.post(
    '/api/profile/ssh-keys',
    {
      config: sessionOnly,
      schema: {
        tags: TAGS,
        summary: 'Add an SSH public key to sign in to SFTP with',
        description: `Ed25519, ECDSA or RSA of at least 2048 bits; a private key, a certificate, DSA, a short RSA key or anything else is 400 \`VALIDATION_FAILED\` with the reason on \`body/publicKey\`. Asks for the password and, with two-factor sign-in on, a code, as making an API key does (400 when missing, 403 WRONG_PASSWORD, 401 INVALID_CREDENTIALS, 403 SIGN_IN_AGAIN, 429). 409 \`ALREADY_EXISTS\` for a key on the account already, 409 \`CONFLICT\` past ${MAX_SSH_KEYS_PER_USER} keys.`,
        body: NewSshKeyBody,
        response: created(SshKeyEnvelope, 400, 401, 403, 409, 429),
      },
    },
    async (request, reply) => {
      const key = await keys.add(currentUser(request), request.body, request.ip);
      void reply.code(201);
      return { message: 'SSH key added', data: key };
    },
  );

  app.delete(
    '/api/profile/ssh-keys/:id',
    {
      config: sessionOnly,
      schema: {
        tags: TAGS,
        summary: 'Delete one of your SSH keys, at once',
        description: 'SFTP sessions signed in with it end, and it signs in no more.',
        params: SshKeyParams,
        response: {
          204: Type.Null({ description: 'Deleted' }),
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (request, reply) => {
      await keys.remove(currentUser(request), request.params.id);
      return reply.code(204).send(null);
    },
  );
}
