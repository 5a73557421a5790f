import { Type } from 'typebox';
import { AppError } from '../../errors.js';
import { currentUser } from '../../http/access.js';
import { responses } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import {
  TemplateDeletedEnvelope,
  TemplateEnvelope,
  TemplateListEnvelope,
  TemplateParams,
} from './templates.schemas.js';
import type { TemplatesService } from './templates.service.js';

/** The media types an egg may be sent as besides JSON: its YAML (or JSON) text as is. */
const TEXT_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml', 'text/plain'];

export async function templatesRoutes(app: App, templates: TemplatesService): Promise<void> {
  app.get(
    '/api/templates',
    {
      schema: {
        tags: ['templates'],
        summary: 'Server templates',
        response: responses(TemplateListEnvelope, 401, 403),
      },
    },
    async () => ({ message: 'Templates', data: await templates.list() }),
  );

  app.get(
    '/api/templates/:id',
    {
      schema: {
        tags: ['templates'],
        summary: 'A template; a user sees only the variables marked viewable',
        params: TemplateParams,
        response: responses(TemplateEnvelope, 401, 403, 404),
      },
    },
    async (request) => ({
      message: 'Template',
      data: await templates.get(currentUser(request), request.params.id),
    }),
  );

  // The import takes the egg as sent: a JSON body, or its text as YAML (or plain text). Only this
  // route reads those types, so they are registered in a scope of its own.
  await app.register((scope, _options, done) => {
    scope.addContentTypeParser(TEXT_TYPES, { parseAs: 'string' }, (_request, body, done) => {
      done(null, body);
    });
    scope.post(
      '/api/templates/import',
      {
        config: { access: { action: 'templates.manage' } },
        schema: {
          tags: ['templates'],
          summary: 'Import a Pterodactyl (PTDL_v1, PTDL_v2) or Pelican (PLCN_v1 to v3) egg (admin)',
          description:
            'The body is the egg: its JSON (application/json) or its YAML or JSON text (application/yaml, text/yaml, text/plain). 400 names the field of the egg that is wrong; 409 when the egg (its uuid) is imported already. Unknown variable rules are kept and listed in `warnings`.',
          body: Type.Unknown({ description: 'The egg' }),
          response: responses(TemplateEnvelope, 400, 401, 403, 409, 413, 415),
        },
      },
      async (request) => {
        const body = request.body;
        if (body === undefined || body === null || body === '') {
          throw new AppError('VALIDATION_FAILED', 'Send the egg as the body');
        }
        try {
          const text = typeof body === 'string' ? body : JSON.stringify(body);
          return { message: 'Template imported', data: await templates.import(text) };
        } catch (error) {
          // No egg is nested a thousand levels deep; such a body overflows the stack.
          if (error instanceof RangeError) {
            throw new AppError('VALIDATION_FAILED', '$: the egg is nested too deeply', {
              details: [{ path: '$', message: 'nested too deeply' }],
            });
          }
          throw error;
        }
      },
    );
    done();
  });

  app.delete(
    '/api/templates/:id',
    {
      config: { access: { action: 'templates.manage' } },
      schema: {
        tags: ['templates'],
        summary: 'Delete a template (admin); 409 while servers use it',
        params: TemplateParams,
        response: responses(TemplateDeletedEnvelope, 401, 403, 404, 409),
      },
    },
    async (request) => {
      await templates.remove(request.params.id);
      return { message: 'Template deleted', data: { id: request.params.id } };
    },
  );
}
