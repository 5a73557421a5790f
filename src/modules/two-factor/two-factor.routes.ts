import { Type } from 'typebox';
import { ROLES } from '../../domain/user.js';
import { currentUser } from '../../http/access.js';
import { Envelope, PasswordAttempt, responses } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import type { TwoFactorService } from './two-factor.service.js';

const TAGS = ['two-factor'];
const Code = Type.String({
  minLength: 1,
  maxLength: 32,
  description: 'The 6 digits of the authenticator app, or one of the recovery codes',
});
const RecoveryCodes = Envelope(
  Type.Object({
    recoveryCodes: Type.Array(Type.String(), {
      description: 'Ten codes good for one sign-in each: shown this once, stored only hashed',
    }),
  }),
);
const Roles = Type.Object(
  {
    requiredFor: Type.Array(
      Type.Union(ROLES.filter((role) => role !== 'banned').map((role) => Type.Literal(role))),
      { uniqueItems: true },
    ),
  },
  { additionalProperties: false },
);

/** Two-factor sign-in: one's own (profile), and which roles must use it (admins). */
export function twoFactorRoutes(app: App, twoFactor: TwoFactorService): void {
  // Open to a user whose role requires a second factor they have not set up: how they get one.
  // Never with an API key: a key cannot change how its owner signs in.
  const enrolment = { beforeSecondFactor: true, sessionOnly: true };
  const sessionOnly = { sessionOnly: true };

  app.get(
    '/api/profile/2fa',
    {
      config: enrolment,
      schema: {
        tags: TAGS,
        summary: 'Whether two-factor sign-in is on, and recovery codes left',
        response: responses(
          Envelope(
            Type.Object({
              enabled: Type.Boolean(),
              enabledAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
              recoveryCodesLeft: Type.Integer(),
              required: Type.Boolean({ description: "The caller's role must use it" }),
            }),
          ),
          401,
          403,
        ),
      },
    },
    async (request) => ({
      message: 'Two-factor sign-in',
      data: await twoFactor.status(currentUser(request)),
    }),
  );

  app.post(
    '/api/profile/2fa/setup',
    {
      config: enrolment,
      schema: {
        tags: TAGS,
        summary: 'Start enrolling: a new secret as text, otpauth URL and QR code (the password)',
        description:
          'The secret stays pending until POST /api/profile/2fa/enable confirms it with a code; a new setup replaces a pending one. 409 when it is on already, or the account has no password.',
        body: Type.Object({ password: PasswordAttempt }, { additionalProperties: false }),
        response: responses(
          Envelope(
            Type.Object({
              secret: Type.String({ description: 'Base32, to type into an authenticator app' }),
              otpauthUrl: Type.String(),
              qrSvg: Type.String({ description: 'The otpauth URL as an SVG QR code' }),
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
      message: 'Scan the code, then confirm it',
      data: await twoFactor.setup(currentUser(request), request.body.password, request.ip),
    }),
  );

  app.post(
    '/api/profile/2fa/enable',
    {
      config: enrolment,
      schema: {
        tags: TAGS,
        summary: 'Turn it on with a code of the pending secret; answers the recovery codes',
        body: Type.Object({ code: Code }, { additionalProperties: false }),
        response: responses(RecoveryCodes, 400, 401, 403, 409, 429),
      },
    },
    async (request) => ({
      message: 'Two-factor sign-in is on',
      data: {
        recoveryCodes: await twoFactor.enable(currentUser(request), request.body.code, request.ip),
      },
    }),
  );

  app.post(
    '/api/profile/2fa/disable',
    {
      config: sessionOnly,
      schema: {
        tags: TAGS,
        summary: 'Turn it off: the password and a code (or a recovery code)',
        body: Type.Object(
          { password: PasswordAttempt, code: Code },
          { additionalProperties: false },
        ),
        response: responses(
          Envelope(Type.Object({ enabled: Type.Literal(false) })),
          400,
          401,
          403,
          409,
          429,
        ),
      },
    },
    async (request) => {
      await twoFactor.disable(
        currentUser(request),
        request.body.password,
        request.body.code,
        request.ip,
      );
      return { message: 'Two-factor sign-in is off', data: { enabled: false as const } };
    },
  );

  app.post(
    '/api/profile/2fa/recovery-codes',
    {
      config: sessionOnly,
      schema: {
        tags: TAGS,
        summary: 'New recovery codes in place of the old: the password and a code',
        body: Type.Object(
          { password: PasswordAttempt, code: Code },
          { additionalProperties: false },
        ),
        response: responses(RecoveryCodes, 400, 401, 403, 409, 429),
      },
    },
    async (request) => ({
      message: 'New recovery codes',
      data: {
        recoveryCodes: await twoFactor.renewRecoveryCodes(
          currentUser(request),
          request.body.password,
          request.body.code,
          request.ip,
        ),
      },
    }),
  );

  app.get(
    '/api/admin/two-factor',
    {
      config: { access: { action: 'users.manage' }, sessionOnly: true },
      schema: {
        tags: TAGS,
        summary: 'The roles that must use two-factor sign-in (admin)',
        response: responses(Envelope(Roles), 401, 403),
      },
    },
    () => ({ message: 'Two-factor policy', data: { requiredFor: [...twoFactor.requiredRoles()] } }),
  );

  app.put(
    '/api/admin/two-factor',
    {
      config: { access: { action: 'users.manage' }, sessionOnly: true },
      schema: {
        tags: TAGS,
        summary: 'Set the roles that must use two-factor sign-in (admin)',
        description:
          'Their members with a password can do nothing but set it up (403 `TWO_FACTOR_REQUIRED` elsewhere) until they have.',
        body: Roles,
        response: responses(Envelope(Roles), 400, 401, 403),
      },
    },
    async (request) => ({
      message: 'Two-factor policy saved',
      data: { requiredFor: [...(await twoFactor.setRequiredRoles(request.body.requiredFor))] },
    }),
  );
}
