import { Type } from 'typebox';
import { Envelope, responses } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { PENDING_TTL_SECONDS, type OidcService } from './oidc.service.js';

const COOKIE = 'panel_oidc';
const COOKIE_PATH = '/api/auth/oidc';

const ProviderParams = Type.Object({ provider: Type.String({ minLength: 1, maxLength: 64 }) });

export function oidcRoutes(app: App, oidc: OidcService, publicUrl: string): void {
  const secure = publicUrl.startsWith('https:');
  const cookieOptions = {
    path: COOKIE_PATH,
    httpOnly: true,
    sameSite: 'lax' as const,
    secure,
  };

  app.get(
    '/api/auth/oidc/providers',
    {
      config: { access: 'public' },
      schema: {
        tags: ['auth'],
        summary: 'The OpenID Connect providers people can sign in with',
        response: responses(
          Envelope(
            Type.Array(
              Type.Object({ id: Type.String(), name: Type.String(), loginUrl: Type.String() }),
            ),
          ),
        ),
      },
    },
    () => ({ message: 'Sign-in providers', data: oidc.list() }),
  );

  app.get(
    '/api/auth/oidc/:provider/login',
    {
      config: { access: 'public' },
      schema: {
        tags: ['auth'],
        summary: 'Start signing in at a provider (302 to the provider)',
        description:
          '`redirect`: where the browser lands afterwards; its origin must be in OIDC_REDIRECT_ALLOWLIST (default: the panel itself). 400 for any other target, 404 for an unknown provider, 503 when the provider cannot be reached.',
        params: ProviderParams,
        querystring: Type.Object(
          { redirect: Type.Optional(Type.String({ maxLength: 2048 })) },
          { additionalProperties: false },
        ),
        response: {
          400: Type.Ref('ErrorBody'),
          404: Type.Ref('ErrorBody'),
          503: Type.Ref('ErrorBody'),
        },
      },
    },
    async (request, reply) => {
      const { location, cookie } = await oidc.begin(
        request.params.provider,
        request.query.redirect,
      );
      return reply
        .setCookie(COOKIE, cookie, { ...cookieOptions, maxAge: PENDING_TTL_SECONDS })
        .redirect(location, 302);
    },
  );

  app.get(
    '/api/auth/oidc/:provider/callback',
    {
      config: { access: 'public' },
      schema: {
        tags: ['auth'],
        summary: 'Where the provider sends the browser back (302 to the redirect target)',
        description:
          'Success: `#access_token=…&token_type=bearer&username=…&role=…` in the fragment. Failure: `#error=` with invalid_state, access_denied, login_failed, registration_closed.',
        params: ProviderParams,
      },
    },
    async (request, reply) => {
      const { provider } = request.params;
      const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '';
      // Built from PUBLIC_URL, never from the Host header: it must equal the registered callback.
      const callbackUrl = new URL(`${publicUrl}/api/auth/oidc/${provider}/callback${query}`);
      const location = await oidc.finish(provider, callbackUrl, request.cookies[COOKIE]);
      // For the audit log: who signed in, or that it failed (the fragment says which).
      const fragment = new URLSearchParams(location.slice(location.indexOf('#') + 1));
      const username = fragment.get('username');
      if (username === null) request.auditFailed = true;
      else request.auditActor = { id: null, name: username };
      return reply.clearCookie(COOKIE, cookieOptions).redirect(location, 302);
    },
  );
}
