import { responses } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import {
  DeletedEnvelope,
  NewRegistryBody,
  RegistryChangesBody,
  RegistryEnvelope,
  RegistryParams,
  RegistryRuleBody,
  RegistrySettingsEnvelope,
} from './registries.schemas.js';
import type { RegistriesService } from './registries.service.js';

const TAGS = ['registries'];
// The panel's settings: the same right as the rest of them.
const config = { access: { action: 'panel.settings' } } as const;

/** Container registries: admins only (docs/api.md, "Registries"). Passwords are never answered. */
export function registriesRoutes(app: App, registries: RegistriesService): void {
  app.get(
    '/api/admin/registries',
    {
      config,
      schema: {
        tags: TAGS,
        summary: 'The listed registries and whether images may come only from them (admin)',
        response: responses(RegistrySettingsEnvelope, 401, 403),
      },
    },
    async () => ({ message: 'Registries', data: await registries.settings() }),
  );

  app.put(
    '/api/admin/registries',
    {
      config,
      schema: {
        tags: TAGS,
        summary: 'Whether images may be pulled only from the listed registries (admin)',
        description:
          'With `restricted`, a server whose image comes from another registry cannot be created or given that image (400 `IMAGE_NOT_ALLOWED`), and an image missing on the Docker host is not pulled from one (409 `START_REFUSED` at the start or install). Images already on the host still run.',
        body: RegistryRuleBody,
        response: responses(RegistrySettingsEnvelope, 400, 401, 403),
      },
    },
    async (request) => ({
      message: 'Registry rule saved',
      data: await registries.setRestricted(request.body.restricted),
    }),
  );

  app.post(
    '/api/admin/registries',
    {
      config,
      schema: {
        tags: TAGS,
        summary: 'List a registry, with the credentials pulls from it use (admin)',
        description:
          '400 for a host no image can name, or a username without a password (or the reverse); 409 `ALREADY_EXISTS` when it is listed. The password is never shown again.',
        body: NewRegistryBody,
        response: responses(RegistryEnvelope, 400, 401, 403, 409),
      },
    },
    async (request) => ({ message: 'Registry listed', data: await registries.add(request.body) }),
  );

  app.put(
    '/api/admin/registries/:host',
    {
      config,
      schema: {
        tags: TAGS,
        summary: "Change a registry's credentials (admin)",
        params: RegistryParams,
        body: RegistryChangesBody,
        response: responses(RegistryEnvelope, 400, 401, 403, 404),
      },
    },
    async (request) => ({
      message: 'Registry saved',
      data: await registries.update(request.params.host, request.body),
    }),
  );

  app.delete(
    '/api/admin/registries/:host',
    {
      config,
      schema: {
        tags: TAGS,
        summary: 'Forget a registry and its credentials (admin)',
        description:
          'With the rule `restricted`, images are no longer pulled from it; images already on the host still run.',
        params: RegistryParams,
        response: responses(DeletedEnvelope, 400, 401, 403, 404),
      },
    },
    async (request) => {
      await registries.remove(request.params.host);
      return { message: 'Registry removed', data: null };
    },
  );
}
