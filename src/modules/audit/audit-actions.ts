/**
 * The audit action of every route that changes something (`METHOD url`, exactly as registered).
 * test/audit.test.ts compares this table with the panel's routes: a new route that changes
 * something without an action here fails it.
 */
export const AUDITED_ROUTES: Readonly<Record<string, string>> = {
  'POST /api/auth/register': 'auth.register',
  'POST /api/auth/login': 'auth.login',
  'POST /api/auth/login/2fa': 'auth.login-2fa',
  'GET /api/auth/oidc/:provider/callback': 'auth.oidc-login',
  'POST /api/auth/set-password': 'auth.set-password',

  'POST /api/users': 'user.create',
  'PUT /api/users/:username/password': 'user.password',
  'DELETE /api/users/:username/2fa': 'user.two-factor-off',
  'PUT /api/users/:username/role': 'user.role',
  'PUT /api/users/:username/servers': 'user.servers',
  'DELETE /api/users/:username': 'user.delete',

  'PUT /api/profile/username': 'profile.username',
  'PUT /api/profile/password': 'profile.password',
  'POST /api/profile/2fa/setup': 'two-factor.setup',
  'POST /api/profile/2fa/enable': 'two-factor.enable',
  'POST /api/profile/2fa/disable': 'two-factor.disable',
  'POST /api/profile/2fa/recovery-codes': 'two-factor.recovery-codes',
  'PUT /api/admin/two-factor': 'two-factor.policy',
  'POST /api/profile/api-keys': 'api-key.create',
  'DELETE /api/profile/api-keys/:id': 'api-key.revoke',
  'POST /api/profile/ssh-keys': 'ssh-key.create',
  'DELETE /api/profile/ssh-keys/:id': 'ssh-key.delete',

  'POST /api/servers/create': 'server.create',
  'DELETE /api/servers/:server': 'server.delete',
  'PUT /api/servers/:server/config': 'server.config',
  'PUT /api/servers/:server/variables': 'server.variables',
  'PUT /api/servers/:server/allocations': 'server.allocations',
  'PUT /api/servers/:server/owner': 'server.owner',
  'POST /api/servers/:server/install': 'server.install',
  'PUT /api/servers/:server/install': 'server.install-state',
  'POST /api/servers/:server/eula': 'server.eula',
  'PUT /api/servers/:server/image': 'server.image',
  'POST /api/servers/:server/start': 'server.start',
  'POST /api/servers/:server/stop': 'server.stop',
  'POST /api/servers/:server/restart': 'server.restart',
  'POST /api/servers/:server/kill': 'server.kill',
  'POST /api/servers/:server/command': 'server.command',
  'PUT /api/servers/:server/users/:username': 'server.user-permissions',
  'DELETE /api/servers/:server/users/:username': 'server.user-remove',

  'POST /api/servers/:server/files/create': 'file.create',
  'POST /api/servers/:server/files/upload': 'file.upload',
  'PUT /api/servers/:server/files/content': 'file.write',
  'PUT /api/servers/:server/files/rename': 'file.rename',
  'POST /api/servers/:server/files/move': 'file.move',
  'POST /api/servers/:server/files/move-many': 'file.move',
  'DELETE /api/servers/:server/files': 'file.delete',
  'POST /api/servers/:server/files/delete': 'file.delete',
  'POST /api/servers/:server/files/compress': 'file.compress',
  'POST /api/servers/:server/files/decompress': 'file.decompress',
  'POST /api/servers/:server/files/download-link': 'file.download-link',

  'POST /api/servers/:server/schedules': 'schedule.create',
  'PUT /api/servers/:server/schedules/:id': 'schedule.update',
  'DELETE /api/servers/:server/schedules/:id': 'schedule.delete',
  'POST /api/servers/:server/schedules/:id/run': 'schedule.run-now',

  'POST /api/servers/:server/backups': 'backup.create',
  'DELETE /api/servers/:server/backups/:id': 'backup.delete',
  'POST /api/servers/:server/backups/:id/restore': 'backup.restore',
  'PUT /api/servers/:server/backups/:id/lock': 'backup.lock',
  'POST /api/servers/:server/backups/:id/download-link': 'backup.download-link',
  'PUT /api/servers/:server/backup-settings': 'backup.settings',

  'POST /api/admin/webhooks': 'webhook.create',
  'PUT /api/admin/webhooks/:id': 'webhook.update',
  'DELETE /api/admin/webhooks/:id': 'webhook.delete',
  'POST /api/admin/webhooks/:id/secret': 'webhook.secret',
  'POST /api/admin/webhooks/:id/test': 'webhook.test',

  'PUT /api/admin/settings': 'panel.settings',
  'PUT /api/admin/registries': 'registry.rule',
  'POST /api/admin/registries': 'registry.create',
  'PUT /api/admin/registries/:host': 'registry.update',
  'DELETE /api/admin/registries/:host': 'registry.delete',

  'POST /api/templates/import': 'template.import',
  'DELETE /api/templates/:id': 'template.delete',

  'POST /api/tickets/create': 'ticket.create',
  'POST /api/tickets/:id/message': 'ticket.message',
  'PUT /api/tickets/:id/status': 'ticket.status',
};

/** Sign-in routes: their refusals are recorded too (a failed sign-in is an auth event). */
export const SIGN_IN_ROUTES: ReadonlySet<string> = new Set([
  'POST /api/auth/register',
  'POST /api/auth/login',
  'POST /api/auth/login/2fa',
  'GET /api/auth/oidc/:provider/callback',
  'POST /api/auth/set-password',
]);

/**
 * Body and query fields an entry may carry in its details: names, paths and settings, never a
 * password, token, code, console input, file content or URL (a webhook's URL may hold a token).
 * A schedule's tasks and a server's backup save commands are recorded, commands included: they
 * are configuration the panel types later in someone's name, not console input
 * (docs/security.md). Anything else sent is left out.
 */
export const SAFE_FIELDS: readonly string[] = [
  'username',
  'new_username',
  'role',
  'servers',
  'permissions',
  'name',
  'displayName',
  'autoRestart',
  'limits',
  'runtime',
  'image',
  'template',
  'state',
  'status',
  'requiredFor',
  'expiresAt',
  'path',
  'paths',
  'from',
  'to',
  'destination',
  'format',
  'locked',
  'enabled',
  'events',
  'title',
  'keepLast',
  'keepDays',
  'maxCount',
  'maxBytes',
  'cron',
  'timezone',
  'onlyWhenRunning',
  'tasks',
  'beforeCommands',
  'afterCommands',
  'savedLine',
  'waitSeconds',
  'allocations',
  'serverDefaults',
  'backupDefaults',
  'registrationOpen',
  'host',
  'restricted',
  'owner',
  'link',
];
