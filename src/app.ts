/**
 * Builds the panel: what the start opens on the machine (src/machine.ts), Fastify with its
 * cross-cutting plugins (src/http/), then every module wired explicitly from its dependencies,
 * and what runs once the panel is ready and at its close. Only wiring lives here: how each piece
 * works is its own file's concern. Nothing here listens; `server.ts` does.
 */
import path from 'node:path';
import type { Config } from './config.js';
import { VERSION } from './version.js';
import { openMachine, type MachineOverrides } from './machine.js';
import { PanelEvents } from './events.js';
import { AppError } from './errors.js';
import { registerAccessControl } from './http/access.js';
import { registerDocs } from './http/docs.js';
import { registerErrorHandling } from './http/errors.js';
import { createFastify } from './http/fastify.js';
import { registerInputGuards } from './http/input.js';
import { registerRouteList } from './http/route-list.js';
import { LazySchemas } from './http/lazy-schemas.js';
import { registerSocketLog, type LogStream } from './http/logging.js';
import { registerPlugins } from './http/plugins.js';
import { registerSecurityHeaders } from './http/security.js';
import { registerValidation } from './http/validation.js';
import { isLoopbackHost, readTlsPair, transportReport } from './http/tls.js';
import { DEFAULT_WEB_ROOT, registerWebUi } from './http/web.js';
import { ApiKeysRepository } from './modules/api-keys/api-keys.repository.js';
import { apiKeysRoutes } from './modules/api-keys/api-keys.routes.js';
import { ApiKeysService } from './modules/api-keys/api-keys.service.js';
import { recordPanelEvents } from './modules/audit/audit-events.js';
import { registerAuditHook } from './modules/audit/audit.hook.js';
import { AuditRepository } from './modules/audit/audit.repository.js';
import { auditRoutes } from './modules/audit/audit.routes.js';
import { AuditService } from './modules/audit/audit.service.js';
import { AuthService } from './modules/auth/auth.service.js';
import { authRoutes } from './modules/auth/auth.routes.js';
import { LoginThrottle } from './modules/auth/login-throttle.js';
import { PasswordHasher } from './modules/auth/passwords.js';
import { TokenService } from './modules/auth/tokens.js';
import {
  ConsoleHub,
  DEFAULT_CONSOLE_LIMITS,
  type ConsoleLimits,
} from './modules/console/console.hub.js';
import { consoleRoutes } from './modules/console/console.routes.js';
import { DownloadLinks } from './modules/files/download-links.js';
import { filesRoutes } from './modules/files/files.routes.js';
import { FilesService } from './modules/files/files.service.js';
import { healthRoutes } from './modules/health/health.routes.js';
import { registerMetrics } from './modules/metrics/metrics.plugin.js';
import { oidcRoutes } from './modules/oidc/oidc.routes.js';
import { OidcService } from './modules/oidc/oidc.service.js';
import { profileRoutes } from './modules/profile/profile.routes.js';
import { ProfileService } from './modules/profile/profile.service.js';
import { ServersRepository } from './modules/servers/servers.repository.js';
import { serversRoutes } from './modules/servers/servers.routes.js';
import { ServerSettingsService } from './modules/servers/server-settings.service.js';
import { serverFeaturesRoutes } from './modules/servers/server-features.routes.js';
import { ServerFeaturesService } from './modules/servers/server-features.service.js';
import { serverUsersRoutes } from './modules/server-users/server-users.routes.js';
import { ServerUsersService } from './modules/server-users/server-users.service.js';
import { TemplatesRepository } from './modules/templates/templates.repository.js';
import { templatesRoutes } from './modules/templates/templates.routes.js';
import { TemplatesService } from './modules/templates/templates.service.js';
import { ServersService } from './modules/servers/servers.service.js';
import { Scheduler, systemClock, type ScheduleClock } from './modules/schedules/scheduler.js';
import { SchedulesRepository } from './modules/schedules/schedules.repository.js';
import { schedulesRoutes } from './modules/schedules/schedules.routes.js';
import { SchedulesService } from './modules/schedules/schedules.service.js';
import { createLocalHost } from './host/local/local-host.js';
import { Arrivals, recordsOn, RoutedHost } from './host/routed-host.js';
import { LOCAL_NODE } from './domain/node.js';
import { LocalBackupStore } from './modules/backups/backup-store.js';
import { BackupsRepository } from './modules/backups/backups.repository.js';
import { backupsRoutes } from './modules/backups/backups.routes.js';
import { BackupsService } from './modules/backups/backups.service.js';
import { RegistriesRepository } from './modules/registries/registries.repository.js';
import { registriesRoutes } from './modules/registries/registries.routes.js';
import { NodesRepository } from './modules/nodes/nodes.repository.js';
import { nodesRoutes } from './modules/nodes/nodes.routes.js';
import { NodesService } from './modules/nodes/nodes.service.js';
import { TransfersRepository } from './modules/transfers/transfers.repository.js';
import { transfersRoutes } from './modules/transfers/transfers.routes.js';
import { TransfersService } from './modules/transfers/transfers.service.js';
import { foreignAddress, refuseTakenAllocations } from './modules/servers/server-checks.js';
import type { TransferPhase } from './domain/transfer.js';
import { createNodeEngines, engineConnectionOf } from './host/remote/node-engines.js';
import { RegistriesService } from './modules/registries/registries.service.js';
import { SettingsRepository } from './modules/settings/settings.repository.js';
import { settingsRoutes } from './modules/settings/settings.routes.js';
import { SettingsService } from './modules/settings/settings.service.js';
import { sftpRoutes } from './modules/sftp/sftp.routes.js';
import { SshKeysRepository } from './modules/ssh-keys/ssh-keys.repository.js';
import { sshKeysRoutes } from './modules/ssh-keys/ssh-keys.routes.js';
import { SshKeysService } from './modules/ssh-keys/ssh-keys.service.js';
import { RateLimit } from './rate-limit.js';
import { lowerOwnOomScore } from './oom-score.js';
import { TicketsRepository } from './modules/tickets/tickets.repository.js';
import { ticketsRoutes } from './modules/tickets/tickets.routes.js';
import { TicketsService } from './modules/tickets/tickets.service.js';
import { usersRoutes } from './modules/users/users.routes.js';
import { SecretBox } from './modules/two-factor/secret-box.js';
import { TwoFactorRepository } from './modules/two-factor/two-factor.repository.js';
import { twoFactorRoutes } from './modules/two-factor/two-factor.routes.js';
import { TwoFactorService } from './modules/two-factor/two-factor.service.js';
import { PasswordLinksRepository } from './modules/users/password-links.repository.js';
import { UsersRepository } from './modules/users/users.repository.js';
import { RETRY_DELAYS_MS } from './domain/webhook.js';
import { UrlGuard, type Resolver } from './modules/webhooks/url-guard.js';
import { WebhookDeliverer } from './modules/webhooks/webhook-deliverer.js';
import { publishPanelEvents } from './modules/webhooks/webhook-events.js';
import { WebhooksRepository } from './modules/webhooks/webhooks.repository.js';
import { webhooksRoutes } from './modules/webhooks/webhooks.routes.js';
import { WebhooksService } from './modules/webhooks/webhooks.service.js';
import { UsersService } from './modules/users/users.service.js';
import { serverUserOf } from './host/runtime/server-user.js';
import { createNodeHost } from './host/remote/node-host.js';
import { NodeHosts } from './host/remote/node-hosts.js';
import type { ServerHost } from './host/host.js';
import { panelId } from './data-dir.js';
import { ARCHIVE_MAX_RATIO, ARCHIVE_RATIO_FLOOR_BYTES } from './host/local/archive-formats.js';
import { loadHostKey } from './modules/sftp/host-key.js';
import { SftpAccess } from './modules/sftp/sftp-access.js';
import { SftpServer } from './modules/sftp/sftp-server.js';
import { serveSftp, SFTP_DEFAULTS } from './modules/sftp/sftp-session.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Whether any account was ever made (the first one becomes the admin). */
    accountsExist(): Promise<boolean>;
    /**
     * Stops the game servers or lets go of them (`serversAtClose`), once: the close does it too,
     * but within Fastify's plugin timeout (10 s), which a stop sequence may outlast. The panel's
     * entry calls it before the close.
     */
    releaseServers(): Promise<void>;
  }
}

export interface AppOverrides extends MachineOverrides {
  readonly now?: () => Date;
  /** Where the log goes instead of standard output (the panel's own log settings are kept). */
  readonly logStream?: LogStream;
  /** How often running servers' disk use is compared with their quota (tests shorten it). */
  readonly diskCheckMs?: number;
  /** How old a server folder's measured size may get before it is walked again (tests shorten it). */
  readonly diskUsageTtlMs?: number;
  readonly consoleLimits?: Partial<ConsoleLimits>;
  /** How a slowed login waits (tests record the wait instead of waiting). */
  readonly sleep?: (ms: number) => Promise<void>;
  /**
   * Runs `removeLeftovers`, handed over once the panel listens: by default at once, in the
   * background. Tests hold it, to see the panel serve before it ran.
   */
  readonly removeLeftovers?: (removeLeftovers: () => Promise<void>) => void;
  /** The built web UI to serve at `/` instead of `dist/web` (tests hand in a fixture). */
  readonly webRoot?: string;
  /**
   * The clock and timers schedules run by, and their tasks wait with (tests hand in a fake clock
   * they advance). By default `now` and the real timers.
   */
  readonly scheduleClock?: ScheduleClock;
  /**
   * The waits between a webhook delivery's attempts (by default 10 s, 1 min, 5 min, 30 min,
   * 2 h); tests shorten them.
   */
  readonly webhookRetryDelaysMs?: readonly number[];
  /** How long a webhook delivery waits for its answer; 10 s by default. */
  readonly webhookTimeoutMs?: number;
  /** How webhook hosts are resolved (tests answer chosen addresses); DNS by default. */
  readonly webhookResolver?: Resolver;
  /**
   * What the panel's close does with running game servers, asked at the close: `keep` lets go
   * of them, running (the panel's own entry, src/server.ts: servers outlive the panel, and the
   * next one takes them back); `stop` stops them (by default here, for a panel built inside
   * another program, such as the tests, which must leave nothing running).
   */
  readonly serversAtClose?: () => 'keep' | 'stop';
  /** The panel's event bus (src/events.ts); tests hand in one they listen on. */
  readonly events?: PanelEvents;
  /** How often every node is asked how it is (15 s by default); tests shorten it. */
  readonly nodeCheckIntervalMs?: number;
  /** How long a node has to answer (5 s by default); tests shorten it. */
  readonly nodeDeadlineMs?: number;
  /**
   * How many seconds a node's engine that went away may take to come back before the servers
   * running there are shown `unknown` (60 by default); tests shorten it.
   */
  readonly engineReturnAttempts?: number;
  /**
   * Awaited at the start of each phase of a transfer (docs/nodes.md, "Transfers"): tests hold a
   * transfer there to cancel it or close the panel mid-way.
   */
  readonly transferPause?: (server: string, phase: TransferPhase) => Promise<void>;
}

export { redactUrl } from './http/logging.js';

/** How long a webhook delivery waits for its answer by default. */
const WEBHOOK_TIMEOUT_MS = 10_000;

export { VERSION } from './version.js';

export async function buildApp(config: Config, overrides: AppOverrides = {}) {
  // Read before anything is opened: a bad TLS_CERT_FILE or TLS_KEY_FILE stops the start.
  const tls = config.tls && readTlsPair(config.tls);
  const { runtime, docker, serverUsers, jwtSecret, dataDirWarnings, db } = await openMachine(
    config,
    overrides,
  );
  const now = overrides.now ?? (() => new Date());

  // Validators and serializers are compiled on first use, the rest once the panel listens.
  const schemas = new LazySchemas();
  const app = createFastify(config, { schemas, tls, logStream: overrides.logStream });

  registerRouteList(app);
  app.decorate('accountsExist', () => users.anyEverRegistered());
  registerValidation(app, schemas);
  registerErrorHandling(app);
  registerSocketLog(app);
  registerSecurityHeaders(app);
  registerInputGuards(app);
  await registerDocs(app, VERSION);
  await registerWebUi(app, overrides.webRoot ?? DEFAULT_WEB_ROOT);
  // On close, servers are stopped (or let go of) before the console sockets close (./http/plugins.ts).
  // The host is made below; this is bound to it there.
  let stopServers = (): Promise<void> => Promise.resolve();
  let serversReleased: Promise<void> | null = null;
  const releaseServers = (): Promise<void> => (serversReleased ??= stopServers());
  app.decorate('releaseServers', releaseServers);
  await registerPlugins(app, { maxUploadBytes: config.maxUploadBytes, releaseServers });

  const events = overrides.events ?? new PanelEvents();
  const users = new UsersRepository(db.kysely, db.dialect);
  const servers = new ServersRepository(db.kysely);
  const settings = new SettingsService({
    repo: new SettingsRepository(db.kysely),
    registrationEnv: config.registration,
  });
  const templates = new TemplatesService({
    templates: new TemplatesRepository(db.kysely),
    servers,
    now,
    log: app.log,
  });
  const tickets = new TicketsRepository(db.kysely, db.dialect);
  const hasher = new PasswordHasher();
  const tokens = new TokenService(jwtSecret, now);
  const throttle = new LoginThrottle({ ...config.loginThrottle, now, sleep: overrides.sleep });
  const twoFactor = new TwoFactorService({
    repo: new TwoFactorRepository(db.kysely),
    box: new SecretBox(jwtSecret),
    throttle,
    hasher,
    users,
    now,
  });
  const apiKeys = new ApiKeysService({
    keys: new ApiKeysRepository(db.kysely),
    findUser: (id) => users.findById(id),
    reachableServers: (user) => auth.reachableServers(user),
    confirmIdentity: (user, proof, address) => twoFactor.confirm(user, proof, address),
    events,
    now,
  });
  // SSH public keys for SFTP sign-in; the SFTP server looks them up through this service.
  const sshKeys = new SshKeysService({
    keys: new SshKeysRepository(db.kysely),
    confirmIdentity: (user, proof, address) => twoFactor.confirm(user, proof, address),
    events,
    now,
  });
  const usersService = new UsersService({
    users,
    links: new PasswordLinksRepository(db.kysely),
    servers,
    hasher,
    apiKeys,
    secondFactor: twoFactor,
    events,
    publicUrl: config.publicUrl,
    now,
  });
  const auth: AuthService = new AuthService({
    users,
    servers,
    hasher,
    tokens,
    throttle,
    registration: {
      env: config.registration,
      openAfterFirst: () => settings.registrationOpenAfterFirst(),
      limit: new RateLimit({
        max: config.registrationLimit.maxPerAddress,
        windowSeconds: config.registrationLimit.windowSeconds,
        now,
      }),
    },
    now,
    secondFactor: twoFactor,
    apiKeys,
    passwordLinks: usersService,
  });
  // Registry passwords: sealed under a key of their own, derived from the JWT secret.
  const registries = new RegistriesService({
    repo: new RegistriesRepository(db.kysely),
    box: new SecretBox(jwtSecret, 'registry credentials'),
    now,
    log: app.log,
  });
  // Nodes: how each is reached is sealed under a key of its own, derived from the JWT secret.
  const nodes: NodesService = new NodesService({
    repo: new NodesRepository(db.kysely),
    box: new SecretBox(jwtSecret, 'node secrets'),
    engines: createNodeEngines({
      dockerHost: config.dockerHost,
      dockerCertPath: config.dockerCertPath,
    }),
    now,
    log: app.log,
    ...(overrides.nodeCheckIntervalMs === undefined
      ? {}
      : { checkIntervalMs: overrides.nodeCheckIntervalMs }),
    ...(overrides.nodeDeadlineMs === undefined ? {} : { deadlineMs: overrides.nodeDeadlineMs }),
    changed: (name, change): Promise<void> => nodeHosts.changed(name, change),
    answersAgain: (name) => void host.reconnectNode(name),
  });
  // The panel's own machine is the node `local`; each server's calls go to its node's host
  // (docs/nodes.md, "Placement"). A server being transferred is known to its new node's host
  // for its files (docs/nodes.md, "Transfers").
  const arrivals = new Arrivals();
  const localHost = createLocalHost({
    serversDir: config.serversDir,
    ownUsers: serverUsers !== null,
    userOf: (record) => (serverUsers === null ? null : serverUserOf(serverUsers, record.id)),
    runtimes: { process: runtime, docker },
    records: recordsOn(servers, LOCAL_NODE, arrivals),
    templates,
    log: app.log,
    now,
    diskGraceSeconds: config.diskGraceSeconds,
    diskCheckMs: overrides.diskCheckMs,
    diskUsageTtlMs: overrides.diskUsageTtlMs,
    registries,
    onServerEvent: (server, kind, exit) => {
      events.emit('server-event', server, kind, exit);
    },
    refuseStart: () => nodes.refuseStartOn(LOCAL_NODE),
  });
  const hosts = new Map<string, ServerHost>([[LOCAL_NODE, localHost]]);
  // Each remote node's host: the same supervisor over the node's engine, volumes and helper
  // containers (docs/nodes.md, "A node's host").
  const nodeHosts: NodeHosts = new NodeHosts({
    hosts,
    names: (): Promise<string[]> => nodes.remoteNames(),
    connectionOf: (name) => nodes.connectionOf(name),
    make: (name, connection) =>
      createNodeHost({
        node: name,
        connection: engineConnectionOf(connection),
        panelId: panelId(config.dataDir),
        records: recordsOn(servers, name, arrivals),
        templates,
        // A server on a node always has a user of its own there, whoever the panel runs as.
        userOf: (record) => serverUserOf(serverUsers ?? config.serverUidRange, record.id),
        log: app.log,
        now,
        diskGraceSeconds: config.diskGraceSeconds,
        network: config.serverNetwork,
        registries,
        onServerEvent: (server, kind, exit) => {
          events.emit('server-event', server, kind, exit);
        },
        engineReturnAttempts: overrides.engineReturnAttempts,
        refuseStart: () => nodes.refuseStartOn(name),
      }),
    log: app.log,
  });
  const host: RoutedHost = new RoutedHost({
    records: servers,
    hosts,
    refuseStart: (node) => nodes.refuseStartOn(node),
    unreachable: (node) => nodes.health(node).status === 'unreachable',
  });
  const serversService = new ServersService({
    servers,
    grants: users,
    host,
    placement: nodes,
    templates,
    events,
    portRange: config.serverPortRange,
    now,
    defaultLimits: () => settings.serverDefaults(),
    imageRefusal: (image) => registries.refusal(image),
  });
  const transfers = new TransfersService({
    repo: new TransfersRepository(db.kysely),
    servers: serversService,
    host,
    arrivals,
    target: (node, memoryBytes) => nodes.transferTarget(node, memoryBytes),
    refuseTaken: async (record, node) => {
      // Its addresses must be the new node's: 0.0.0.0, or that node's public address.
      const address = await nodes.nodeAddress(node);
      const foreign = address === undefined ? null : foreignAddress(record.allocations, address);
      if (foreign !== null) {
        throw new AppError(
          'CONFLICT',
          `${foreign.message}: change the server's allocations first; nothing was transferred`,
        );
      }
      await refuseTakenAllocations(servers, record.name, node, record.allocations);
    },
    events,
    workDir: path.join(config.dataDir, 'transfers'),
    now,
    log: app.log,
    pause: overrides.transferPause,
  });
  events.on('server-event', (server, kind) => {
    if (kind === 'started') transfers.started(server);
  });
  const audit = new AuditService({
    repo: new AuditRepository(db.kysely),
    requireSettings: (user, server) => serversService.require(user, server, 'server.settings'),
    retentionDays: config.auditRetentionDays,
    now,
    log: app.log,
  });
  const links = new DownloadLinks({ now });
  const backups = new BackupsService({
    backups: new BackupsRepository(db.kysely),
    store: new LocalBackupStore(config.backupDir),
    servers: serversService,
    usernameOf: async (id) => (await users.findById(id))?.username,
    host: serversService.backupHost(),
    links,
    events,
    now,
    log: app.log,
    defaults: () => settings.backupDefaults(),
  });
  const scheduleRecords = new SchedulesRepository(db.kysely);
  const scheduleClock = overrides.scheduleClock ?? systemClock(now);
  const scheduler: Scheduler = new Scheduler({
    schedules: scheduleRecords,
    actor: (by) => serversService.actingAs(by),
    backup: async (server) => {
      await backups.createFor(server, {});
    },
    clock: scheduleClock,
    log: app.log,
    // The schedules service is made next, from this scheduler; runs begin only after both exist.
    refusal: (schedule): Promise<string | null> => schedulesService.refusal(schedule),
    ran: (schedule, outcome) =>
      void audit.recordUnattended({
        via: 'schedule',
        viaName: schedule.name,
        action: 'schedule.run',
        server: schedule.server,
        target: String(schedule.id),
        outcome: outcome.status === 'failed' ? 'failed' : 'ok',
        details: {
          result: outcome.status,
          message: outcome.message,
          tasks: schedule.tasks.map((task) => task.action),
        },
      }),
  });
  const schedulesService: SchedulesService = new SchedulesService({
    schedules: scheduleRecords,
    servers: serversService,
    usernameOf: async (id) => (await users.findById(id))?.username,
    scheduler,
    now: () => scheduleClock.now(),
  });
  recordPanelEvents(events, audit);
  events.on('server-deleted', (name) => {
    scheduler.serverRemoved(name);
    transfers.deleted(name);
    backups.removeServer(name).catch((error: unknown) => {
      app.log.warn({ err: error, server: name }, "could not remove a deleted server's backups");
    });
  });
  // No schedule acts while servers are being stopped or let go of for the close.
  // Transfers under way stop where they are (the next start rolls them back).
  stopServers = async () => {
    scheduler.stop();
    audit.stop();
    await transfers.close();
    const keep = (overrides.serversAtClose?.() ?? 'stop') === 'keep';
    await host.shutdown({ stopServers: !keep });
  };
  const consoleLimits = { ...DEFAULT_CONSOLE_LIMITS, ...overrides.consoleLimits };
  const hub = new ConsoleHub({
    servers: serversService,
    auth,
    events,
    log: app.log,
    now,
    limits: consoleLimits,
  });

  const oidc = new OidcService({
    providers: config.oidc.providers,
    publicUrl: config.publicUrl,
    redirectAllowlist: config.oidc.redirectAllowlist,
    secret: jwtSecret,
    users,
    auth,
    registrationOpen: () => settings.registrationOpenAfterFirst(),
    now,
    log: app.log,
  });

  registerAccessControl(app, auth);
  registerAuditHook(app, audit, users);
  healthRoutes(app, VERSION);
  authRoutes(app, auth);
  oidcRoutes(app, oidc, config.publicUrl);
  usersRoutes(app, usersService);
  twoFactorRoutes(app, twoFactor);
  auditRoutes(app, audit);
  apiKeysRoutes(app, apiKeys);
  sshKeysRoutes(app, sshKeys);
  // The SFTP server is made below, with the files service; asked when the route is.
  sftpRoutes(app, { info: () => sftp?.info() ?? null });
  profileRoutes(
    app,
    new ProfileService({ users, tickets, auth, hasher, throttle, events, apiKeys }),
  );
  serversRoutes(
    app,
    serversService,
    new ServerSettingsService({
      servers: serversService,
      repository: servers,
      host,
      templates,
      portRange: config.serverPortRange,
      defaultLimits: () => settings.serverDefaults(),
      imageRefusal: (image) => registries.refusal(image),
      nodes,
    }),
  );
  serverFeaturesRoutes(
    app,
    new ServerFeaturesService({ servers: serversService, repository: servers, templates, now }),
  );
  serverUsersRoutes(app, new ServerUsersService({ servers: serversService, users, events }));
  schedulesRoutes(app, schedulesService);
  backupsRoutes(app, backups);
  await templatesRoutes(app, templates);
  consoleRoutes(app, { servers: serversService, hub, limits: consoleLimits });
  const messageMaxBytes = config.ticketMessageMaxBytes;
  const ticketLimits = {
    tickets: new RateLimit({ max: config.ticketLimits.ticketsPerHour, windowSeconds: 3600, now }),
    messages: new RateLimit({ max: config.ticketLimits.messagesPerHour, windowSeconds: 3600, now }),
  };
  const ticketsService = new TicketsService({
    tickets,
    now,
    messageMaxBytes,
    events,
    limits: ticketLimits,
  });
  ticketsRoutes(app, ticketsService, {
    messageMaxBytes,
  });
  const filesService = new FilesService({
    servers: serversService,
    users,
    keyUser: (keyId) => apiKeys.userOfKey(keyId),
    links,
    templates,
    backups,
    maxUploadBytes: config.maxUploadBytes,
    maxEditBytes: config.maxEditBytes,
    archive: {
      maxBytes: config.archiveMaxBytes,
      maxEntries: config.archiveMaxEntries,
      maxRatio: ARCHIVE_MAX_RATIO,
      ratioFloorBytes: ARCHIVE_RATIO_FLOOR_BYTES,
    },
  });
  filesRoutes(app, filesService, { maxEditBytes: config.maxEditBytes });

  // SFTP (docs/sftp.md): the same accounts, throttle, rights and audit log as the API.
  const sftp =
    config.sftp === null
      ? null
      : new SftpServer({
          config: config.sftp,
          hostKey: loadHostKey(config.dataDir),
          access: new SftpAccess({
            users,
            hasher,
            throttle,
            apiKeys,
            sshKeys,
            serverExists: async (name) => (await servers.find(name)) !== undefined,
            requireFiles: (user, server) => serversService.files(user, server, 'server.files.read'),
            mustEnrolSecondFactor: (user) => auth.mustEnrolSecondFactor(user),
            audit: (entry) => audit.record(entry),
            now,
          }),
          rights: async (user, server, need) => {
            const { config: held, files, guard } = await filesService.access(user, server, need);
            return { files, guard, quota: held.limits.diskBytes };
          },
          serve: (stream, files, options) =>
            serveSftp(stream, files, { ...SFTP_DEFAULTS, ...options }),
          events,
          audit: (entry) => audit.record(entry),
          serversDir: config.serversDir,
          log: app.log,
          now: () => now().getTime(),
        });

  // Webhooks: signed with a secret kept under a key of its own, derived from the JWT secret.
  const webhookRepo = new WebhooksRepository(db.kysely);
  const webhookBox = new SecretBox(jwtSecret, 'webhook secrets');
  const urlGuard = new UrlGuard({
    allowed: config.webhookAllowedHosts,
    ownHosts: [config.host, new URL(config.publicUrl).hostname.replace(/^\[(.*)\]$/, '$1')],
    ...(overrides.webhookResolver ? { resolve: overrides.webhookResolver } : {}),
  });
  const deliverer = new WebhookDeliverer({
    repo: webhookRepo,
    guard: urlGuard,
    box: webhookBox,
    now,
    retryDelaysMs: overrides.webhookRetryDelaysMs ?? RETRY_DELAYS_MS,
    timeoutMs: overrides.webhookTimeoutMs ?? WEBHOOK_TIMEOUT_MS,
    log: app.log,
    userAgent: `game-panel/${VERSION} (webhook)`,
  });
  const webhooks = new WebhooksService({
    repo: webhookRepo,
    guard: urlGuard,
    box: webhookBox,
    deliverer,
    now,
    log: app.log,
  });
  publishPanelEvents(events, (event, data) => {
    webhooks.publish(event, data);
  });
  webhooksRoutes(app, webhooks);
  settingsRoutes(app, settings);
  registriesRoutes(app, registries);

  nodesRoutes(app, nodes);
  transfersRoutes(app, transfers);

  registerMetrics(app, config.metrics, { servers: serversService, consoles: hub });
  app.addHook('onReady', () => {
    if (tls) app.log.info({ certificate: tls.summary }, 'serving HTTPS (TLS_CERT_FILE)');
    const transport = transportReport(config);
    if (transport) app.log[transport.level](transport.message);
    return Promise.resolve();
  });

  // Start what should run once the panel is ready. Servers are stopped at close (see the
  // websocket plugin above), before the database they record their state in is closed.
  app.addHook('onReady', async () => {
    // Providers are discovered in the background: one that is down never stops the panel.
    oidc.warmUp();
    for (const { level, message } of host.report()) app.log[level](message);
    const oom = await lowerOwnOomScore();
    app.log[oom.level](oom.message);
    for (const warning of dataDirWarnings) app.log.warn(warning);
    await twoFactor.load();
    await templates.importShipped();
    await backups.recover();
    await nodeHosts.load();
    // A transfer an earlier run left under way is rolled back before anything starts.
    await transfers.recover();
    await host.recover();
    await transfers.removeStarted();
    // After the servers are back: a missed run that starts at once finds them as they are.
    await scheduler.start();
    await audit.start();
    // Deliveries left pending by the last run go out now, or when their retry is due.
    deliverer.wake();
    nodes.start();
    if (sftp !== null) {
      const where = await sftp.listen();
      app.log.info(
        { address: where.address, port: where.port, hostKey: sftp.info().fingerprint },
        `SFTP listens on ${where.address}:${where.port}, host key ${sftp.info().fingerprint}`,
      );
      if (isLoopbackHost(where.address)) {
        app.log.info(
          'SFTP is reachable from this machine only: set SFTP_ADDRESS=0.0.0.0 for others',
        );
      }
    }
  });
  // What an earlier run left (temporary files of uploads and saves a killed panel cut short,
  // folders of deleted servers) is removed once the panel serves, in the background, so that
  // start-up does not grow with the number of files; this run's own temporary files are never
  // touched. It never rejects: failures are logged.
  app.addHook('onListen', (done) => {
    const run = () => host.removeLeftovers();
    if (overrides.removeLeftovers) overrides.removeLeftovers(run);
    else void run();
    void schemas
      .compileAll((error) => {
        app.log.error({ err: error }, 'a route schema does not compile');
      })
      .then((count) => {
        app.log.debug({ count }, 'route schemas compiled');
      });
    done();
  });
  app.addHook('onClose', async () => {
    // Sessions end first: their uploads are aborted while the storage is still there.
    await sftp?.close();
    nodes.close();
    schemas.clear();
    scheduler.stop();
    await scheduler.idle();
    await backups.idle();
    await transfers.close();
    // Events of the servers' stop are queued; attempts under way are cut short, made next time.
    await webhooks.idle();
    deliverer.stop();
    await deliverer.idle();
    await host.close();
    await db.close();
  });

  return app;
}
