import { currentUser } from '../../http/access.js';
import { responses, UsernameParams } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import {
  PasswordBody,
  PasswordChangedEnvelope,
  RenameBody,
  RenamedEnvelope,
  StatsEnvelope,
} from './profile.schemas.js';
import type { ProfileService } from './profile.service.js';

export function profileRoutes(app: App, profile: ProfileService): void {
  app.get(
    '/api/profile/stats',
    {
      schema: {
        tags: ['profile'],
        summary: "Statistics of the caller's account",
        response: responses(StatsEnvelope, 401, 403),
      },
    },
    async (request) => ({
      message: 'Profile statistics',
      data: await profile.stats(currentUser(request)),
    }),
  );

  app.get(
    '/api/profile/stats/:username',
    {
      config: { access: { action: 'users.read-stats' } },
      schema: {
        tags: ['profile'],
        summary: 'Statistics of another account (admin, support)',
        params: UsernameParams,
        response: responses(StatsEnvelope, 401, 403, 404),
      },
    },
    async (request) => ({
      message: 'Profile statistics',
      data: await profile.statsOf(request.params.username),
    }),
  );

  app.put(
    '/api/profile/username',
    {
      schema: {
        tags: ['profile'],
        summary: 'Rename the caller (needs the current password); tokens stay valid',
        body: RenameBody,
        response: responses(RenamedEnvelope, 400, 401, 403, 409, 429),
      },
    },
    async (request) => {
      const user = await profile.rename(
        currentUser(request),
        request.body.new_username,
        request.body.password,
        request.ip,
      );
      return { message: 'Username changed', data: { username: user.username, role: user.role } };
    },
  );

  app.put(
    '/api/profile/password',
    {
      // Never with an API key (which a password change leaves valid).
      config: { sessionOnly: true },
      schema: {
        tags: ['profile'],
        summary: "Change the caller's password; revokes every earlier token",
        description:
          'The response carries a fresh token to use from now on. Every API key of the caller is revoked too (their console sockets close), unless `revokeApiKeys` is false; `revokedApiKeys` says how many were.',
        body: PasswordBody,
        response: responses(PasswordChangedEnvelope, 400, 401, 403, 429),
      },
    },
    async (request) => ({
      message: 'Password changed; earlier tokens are revoked',
      data: await profile.changePassword(
        currentUser(request),
        request.body.old_password,
        request.body.new_password,
        request.ip,
        request.body.revokeApiKeys ?? true,
      ),
    }),
  );
}
