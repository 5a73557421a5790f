/**
 * The OpenAPI 3 document, generated from the route schemas, at `GET /api/openapi.json`, and the
 * interactive docs page at `/api/docs`. Routes that need a token are marked with the bearer scheme
 * from their access policy, so the document cannot disagree with what is enforced.
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import type { Access } from './access.js';

const DOCS_CSP = [
  "default-src 'self'",
  "base-uri 'none'",
  "object-src 'none'",
  "frame-ancestors 'none'",
  "form-action 'none'",
  "img-src 'self' data:",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
].join('; ');

export async function registerDocs(app: FastifyInstance, version: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Game panel API',
        version,
        description:
          'Manage game servers, their console and files, users and support tickets. ' +
          'Errors are `{ message, code, statusCode }`; successes are `{ message, data }` except ' +
          'register, login and me. See docs/api.md for the decisions behind each endpoint.',
      },
      components: {
        securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      },
    },
    transform: ({ schema, url, route }) => {
      const access: Access = route.config?.access ?? 'active';
      const documented = { ...schema } as Record<string, unknown>;
      if (access !== 'public') documented.security = [{ bearer: [] }];
      return { schema: documented, url };
    },
  });
  await app.register(async (docs) => {
    docs.addHook('onRoute', (route) => {
      route.config = { ...route.config, access: 'public' };
    });
    await docs.register(swaggerUi, { routePrefix: '/api/docs', staticCSP: DOCS_CSP });
  });
  app.get('/api/openapi.json', { schema: { hide: true }, config: { access: 'public' } }, () =>
    app.swagger(),
  );
}
