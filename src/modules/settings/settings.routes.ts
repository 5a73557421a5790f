import { responses } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { SettingsBody, SettingsEnvelope } from './settings.schemas.js';
import type { SettingsService } from './settings.service.js';

const TAGS = ['settings'];
const config = { access: { action: 'panel.settings' } } as const;

/** The panel's settings: admins only (docs/security.md, "Defaults that bound a tenant"). */
export function settingsRoutes(app: App, settings: SettingsService): void {
  app.get(
    '/api/admin/settings',
    {
      config,
      schema: {
        tags: TAGS,
        summary: "The panel's settings (admin): default limits, backup defaults, registration",
        response: responses(SettingsEnvelope, 401, 403),
      },
    },
    async () => ({ message: 'Settings', data: await settings.get() }),
  );

  app.put(
    '/api/admin/settings',
    {
      config,
      schema: {
        tags: TAGS,
        summary: "Change the panel's settings (admin); what is left out stays as it is",
        description:
          'Server defaults apply to servers created from now on (a server created without a process limit gets `pids`); backup defaults apply at once to every server whose own backup settings leave the limit unset. `registrationOpen` counts only while REGISTRATION is unset.',
        body: SettingsBody,
        response: responses(SettingsEnvelope, 400, 401, 403),
      },
    },
    async (request) => ({ message: 'Settings saved', data: await settings.save(request.body) }),
  );
}
