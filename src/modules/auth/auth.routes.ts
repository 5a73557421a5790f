import { currentUser } from '../../http/access.js';
import { Type } from 'typebox';
import { Envelope, responses } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import {
  LinkCheckBody,
  LinkCheckEnvelope,
  LoginBody,
  LoginResponseSchema,
  MeResponse,
  RegisterBody,
  SecondFactorBody,
  SetPasswordBody,
  TokenResponseSchema,
} from './auth.schemas.js';
import type { AuthService } from './auth.service.js';

export function authRoutes(app: App, auth: AuthService): void {
  app.get(
    '/api/auth/registration',
    {
      config: { access: 'public' },
      schema: {
        tags: ['auth'],
        summary: 'Whether anyone may create an account here',
        description:
          '`REGISTRATION=open|closed` decides alone; unset, registration is open until the first account exists (it becomes the admin), then as the admin sets it in the panel settings (closed by default). When `open` is false the sign-in page offers no way to register, and `POST /api/auth/register` answers 403 `REGISTRATION_CLOSED`.',
        response: responses(Envelope(Type.Object({ open: Type.Boolean() }))),
      },
    },
    async () => ({ message: 'Registration', data: { open: await auth.registrationOpen() } }),
  );

  app.post(
    '/api/auth/register',
    {
      config: { access: 'public' },
      schema: {
        tags: ['auth'],
        summary: 'Create an account (the first one becomes admin)',
        description:
          'Each client address may make REGISTRATION_MAX_PER_ADDRESS accounts (5 by default) per REGISTRATION_WINDOW_SECONDS (an hour): past that, 429 `RATE_LIMITED` with Retry-After. 403 `REGISTRATION_CLOSED` when registration is closed (see `GET /api/auth/registration`).',
        body: RegisterBody,
        response: responses(TokenResponseSchema, 400, 403, 409, 413, 429),
      },
    },
    (request) => auth.register(request.body, request.ip),
  );

  app.post(
    '/api/auth/login',
    {
      config: { access: 'public' },
      schema: {
        tags: ['auth'],
        summary: 'Exchange a username and password for a token',
        description:
          'Repeated failures from one address, on one account or on all, answer that address 429 with Retry-After without checking the password. An account failing from many addresses is slowed (up to 3 s per attempt), never refused, so an address without failures can always log in.',
        body: LoginBody,
        response: responses(LoginResponseSchema, 400, 401, 413, 429),
      },
    },
    (request) => auth.login(request.body, request.ip),
  );

  app.post(
    '/api/auth/set-password/check',
    {
      config: { access: 'public' },
      schema: {
        tags: ['auth'],
        summary: 'Whose a set-password link is, and until when',
        description:
          "For the link's page, before the person types a password. A token unknown, used, replaced or expired: 400 `INVALID_LINK`. Failures count per client address like failed logins (429 past the limit).",
        body: LinkCheckBody,
        response: responses(LinkCheckEnvelope, 400, 413, 429),
      },
    },
    async (request) => ({
      message: 'Set-password link',
      data: await auth.checkPasswordLink(request.body.token, request.ip),
    }),
  );

  app.post(
    '/api/auth/set-password',
    {
      config: { access: 'public' },
      schema: {
        tags: ['auth'],
        summary: 'Set the password with a one-time link, and sign in',
        description:
          "Uses the link up (it was made by an admin, good once for 24 hours), sets the password (revoking the account's earlier tokens and API keys) and answers as `POST /api/auth/login` does: a token, or a challenge when the account has two-factor sign-in. A token unknown, used, replaced or expired: 400 `INVALID_LINK`; a password against the rules: 400 `VALIDATION_FAILED` (the link stays good). Failures count per client address like failed logins.",
        body: SetPasswordBody,
        response: responses(LoginResponseSchema, 400, 413, 429),
      },
    },
    async (request) => {
      const { account, answer } = await auth.setPasswordWithLink(
        request.body.token,
        request.body.password,
        request.ip,
      );
      request.auditActor = { id: account.id, name: account.username };
      return answer;
    },
  );

  app.post(
    '/api/auth/login/2fa',
    {
      config: { access: 'public' },
      schema: {
        tags: ['auth'],
        summary: 'The second step of a sign-in with two factors: the challenge and a code',
        description:
          'A TOTP code of the authenticator app (each good once) or an unused recovery code. A wrong code: 401 `INVALID_CREDENTIALS` (five per challenge); an unknown, used or expired challenge: 401 `UNAUTHORIZED`; too many wrong codes from an address: 429, as for passwords.',
        body: SecondFactorBody,
        response: responses(TokenResponseSchema, 400, 401, 413, 429),
      },
    },
    async (request) => {
      // Named before the attempt, which may use the challenge up: a refused code is recorded
      // against the account it was for.
      const account = await auth.challengedAccount(request.body.challenge);
      if (account) request.auditActor = { id: account.id, name: account.username };
      const signedIn = await auth.completeSignIn(
        request.body.challenge,
        request.body.code,
        request.ip,
      );
      request.auditActor ??= { id: null, name: signedIn.username };
      return signedIn;
    },
  );

  app.get(
    '/api/auth/me',
    {
      config: { access: 'signed-in' },
      schema: {
        tags: ['auth'],
        summary: 'Who the token belongs to (answers banned users too)',
        response: responses(MeResponse, 401),
      },
    },
    async (request) => {
      const user = currentUser(request);
      const [servers, signIn] = await Promise.all([auth.reachableServers(user), auth.signIn(user)]);
      const twoFactor = { enabled: user.twoFactor, mustEnrol: auth.mustEnrolSecondFactor(user) };
      return { username: user.username, role: user.role, servers, signIn, twoFactor };
    },
  );
}
