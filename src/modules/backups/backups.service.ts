/**
 * Backups of a server's folder (docs/backups.md). Who may, on the server (admins everything):
 * any `backups.*` permission lists and reads backups and their settings; `backups.create` makes
 * them and changes the settings, with `backups.delete` for retention (it deletes backups) and
 * `console.write` for the save commands (typed in the name of whoever set them); downloading
 * needs `backups.download` and `files.read`, restoring `backups.restore` and `files.write`
 * (a backup holds, and a restore replaces, every file); `backups.delete` deletes, locks and
 * unlocks. Only admins set the limits.
 *
 * One backup or restore per server at a time (409 BACKUP_IN_PROGRESS). Both run in the
 * background once the request is answered; their progress is in `progress` and in the console
 * socket's `backup` frames, their outcome in the record.
 */
import { createHash, randomUUID } from 'node:crypto';
import {
  type Backup,
  type BackupConsistency,
  type BackupProgress,
  type BackupSettings,
} from '../../domain/backup.js';
import { NoLongerExists } from '../../domain/conflicts.js';
import { definedFields } from '../../fields.js';
import { can, type ServerAction } from '../../domain/policy.js';
import type { Standing } from '../servers/servers.service.js';
import type { ServerRecord } from '../../domain/server.js';
import type { DefaultBackupLimits } from '../../domain/panel-settings.js';
import type { User } from '../../domain/user.js';
import { AppError, notFound } from '../../errors.js';
import type { PanelEvents } from '../../events.js';
import type { BackupHost, OpenedFile } from '../../host/host.js';
import type { Logger } from '../../log.js';
import { compileLinePattern } from '../../templates/patterns.js';
import type { DownloadLinks } from '../files/download-links.js';
import type { BackupStore, StoredFile } from './backup-store.js';
import { ignoreLines, packInto, prepareServer, type Packed } from './backup-steps.js';
import type { BackupsRepository } from './backups.repository.js';

/** A server's backup settings as a caller sees them: who set the save commands, by name. */
export interface BackupSettingsView extends Omit<BackupSettings, 'commandsBy'> {
  readonly commandsBy: string | null;
}

/** A backup as its caller sees it: the record, and what is under way now. */
export interface BackupView extends Backup {
  readonly progress: BackupProgress | null;
}

export interface NewBackup {
  readonly name?: string | undefined;
  readonly ignore?: readonly string[] | undefined;
}

/** How often a backup or restore in progress tells the console socket how far it is. */
const PROGRESS_EVERY_MS = 250;

interface Job {
  readonly backup: string;
  readonly action: 'backup' | 'restore';
  bytes: number;
  totalBytes: number | null;
  files: number;
  toldAt: number;
}

/** What the BackupsService is built from (src/app.ts wires it). */
export interface BackupsServiceDeps {
  readonly backups: BackupsRepository;
  readonly store: BackupStore;
  readonly servers: {
    require(
      user: User,
      name: string,
      action: ServerAction | readonly ServerAction[],
    ): Promise<ServerRecord>;
    find(name: string): Promise<ServerRecord | undefined>;
    stillPermits(userId: number, name: string, actions: readonly ServerAction[]): Promise<Standing>;
  };
  /** The account's name; undefined once it is deleted. */
  readonly usernameOf: (userId: number) => Promise<string | undefined>;
  readonly host: BackupHost;
  readonly links: DownloadLinks;
  readonly events: PanelEvents;
  readonly now: () => Date;
  readonly log: Logger;
  /**
   * The panel's backup defaults, for a server whose own limits are unset (docs/backups.md,
   * "Limits"); without them (unit tests) an unset limit is none.
   */
  readonly defaults?: () => Promise<DefaultBackupLimits>;
}

export class BackupsService {
  /** The backup or restore under way, by server. */
  readonly #jobs = new Map<string, Job>();
  readonly #running = new Set<Promise<void>>();

  readonly #deps: BackupsServiceDeps;

  constructor(deps: BackupsServiceDeps) {
    this.#deps = deps;
  }

  /**
   * The limits a backup of `server` is held to: its own, else the panel's default count, and
   * the panel's default bytes or, when that is unset too, the server's disk quota.
   */
  async #limited(server: string, settings: BackupSettings): Promise<BackupSettings> {
    const defaults = await this.#deps.defaults?.();
    if (defaults === undefined) return settings;
    const maxBytes =
      settings.maxBytes ??
      defaults.maxBytes ??
      (await this.#deps.servers.find(server))?.limits.diskBytes ??
      null;
    return { ...settings, maxCount: settings.maxCount ?? defaults.maxCount, maxBytes };
  }

  /** At start, before schedules run: what an earlier run left under way failed. */
  async recover(): Promise<void> {
    await this.#deps.backups.failInterrupted(this.#deps.now().toISOString());
    const removed = await this.#deps.store.removeLeftovers();
    if (removed > 0)
      this.#deps.log.warn({ removed }, 'removed backups an earlier run left unfinished');
  }

  /** Resolves once every backup and restore under way has ended. */
  async idle(): Promise<void> {
    while (this.#running.size > 0) await Promise.allSettled([...this.#running]);
  }

  async list(user: User, server: string): Promise<BackupView[]> {
    await this.#deps.servers.require(user, server, 'server.backups.view');
    return (await this.#deps.backups.list(server)).map((backup) => this.#view(backup));
  }

  async get(user: User, server: string, id: string): Promise<BackupView> {
    return this.#view(await this.#find(user, server, id, 'server.backups.view'));
  }

  /** Starts a backup; answers its record (`running`). */
  async create(user: User, server: string, input: NewBackup): Promise<BackupView> {
    await this.#deps.servers.require(user, server, 'server.backups.create');
    const { backup } = await this.#begin(server, input);
    return this.#view(backup);
  }

  /**
   * A backup for the panel acting on the server's behalf (a schedule's task): no user is
   * checked; resolves once it is done, rejects with why it failed.
   */
  async createFor(server: string, input: NewBackup): Promise<Backup> {
    if (!(await this.#deps.servers.find(server))) throw notFound('Server');
    const { backup, done } = await this.#begin(server, input);
    await done;
    const result = await this.#deps.backups.find(server, backup.id);
    if (result?.status !== 'done') {
      throw new AppError('CONFLICT', result?.message ?? 'The backup failed');
    }
    return result;
  }

  /** The archive of a finished backup, opened for a download. */
  async open(user: User, server: string, id: string): Promise<OpenedFile> {
    const backup = await this.#find(user, server, id, [
      'server.backups.download',
      'server.files.read',
    ]);
    return this.#openFinished(backup);
  }

  /** A single-use link to download the backup without a token (see DownloadLinks). */
  async createDownloadLink(
    user: User,
    server: string,
    id: string,
  ): Promise<{ id: string; expiresAt: Date }> {
    const file = await this.open(user, server, id);
    await file.close();
    return this.#deps.links.create({
      userId: user.id,
      ...(user.key === undefined ? {} : { keyId: user.key.id }),
      server,
      path: '',
      backup: id,
    });
  }

  /** Locking is about deleting: a locked backup survives retention and cannot be deleted. */
  async setLocked(user: User, server: string, id: string, locked: boolean): Promise<BackupView> {
    await this.#find(user, server, id, 'server.backups.delete');
    const backup = await this.#deps.backups.setLocked(server, id, locked);
    if (!backup) throw notFound('Backup');
    return this.#view(backup);
  }

  /** Deletes a backup and its file; 409 while locked or under way. */
  async remove(user: User, server: string, id: string): Promise<void> {
    const backup = await this.#find(user, server, id, 'server.backups.delete');
    if (backup.locked) {
      throw new AppError('BACKUP_LOCKED', 'The backup is locked: unlock it before deleting it');
    }
    if (this.#jobs.get(server)?.backup === id) {
      throw new AppError('BACKUP_IN_PROGRESS', 'The backup is being made or restored');
    }
    if (!(await this.#deps.backups.deleteUnlocked(server, id))) {
      throw new AppError('BACKUP_LOCKED', 'The backup is locked: unlock it before deleting it');
    }
    await this.#deps.store.remove(server, id);
  }

  /**
   * Replaces the server's files by the backup's, in the background: the archive's checksum is
   * verified, it is unpacked beside the server's folder with every check of an extraction and
   * swapped in (see `replaceFromArchive`). The server must be stopped, and cannot start until
   * the restore ends. A failed restore leaves the server's files as they were.
   */
  async restore(user: User, server: string, id: string): Promise<BackupView> {
    const record = await this.#deps.servers.require(user, server, [
      'server.backups.restore',
      'server.files.write',
    ]);
    const backup = await this.#deps.backups.find(server, id);
    if (!backup) throw notFound('Backup');
    if (backup.status !== 'done') {
      throw new AppError('CONFLICT', 'Only a finished backup can be restored');
    }
    const job = this.#claim(server, id, 'restore', backup.unpackedBytes);
    let release: () => void;
    try {
      release = await this.#deps.host.hold(
        server,
        `The server is being restored from the backup "${backup.name}"`,
      );
    } catch (error) {
      this.#jobs.delete(server);
      throw error;
    }
    const started = this.#deps.now().toISOString();
    try {
      // Recorded before the answer: whoever asks next sees it running.
      await this.#deps.backups.recordRestore(id, {
        status: 'running',
        message: 'Restoring',
        at: started,
      });
    } catch (error) {
      release();
      this.#jobs.delete(server);
      throw error;
    }
    this.#track(
      (async () => {
        try {
          await this.#restore(backup, record, job);
          await this.#deps.backups.recordRestore(id, {
            status: 'done',
            message: `Restored ${backup.files ?? 0} files`,
            at: this.#deps.now().toISOString(),
          });
          this.#tell(server, job, 'done', null);
        } catch (error) {
          const message = this.#reason(error, 'the restore');
          this.#tell(server, job, 'failed', message);
          await this.#deps.backups
            .recordRestore(id, { status: 'failed', message, at: this.#deps.now().toISOString() })
            .catch((recordError: unknown) => {
              this.#deps.log.error(
                { err: recordError, backup: id },
                'a restore could not be recorded',
              );
            });
        } finally {
          release();
          this.#jobs.delete(server);
        }
      })(),
    );
    return {
      ...backup,
      lastRestore: { status: 'running', message: 'Restoring', at: started },
      progress: progressOf(job),
    };
  }

  async settings(user: User, server: string): Promise<BackupSettingsView> {
    await this.#deps.servers.require(user, server, 'server.backups.view');
    return this.#settingsView(await this.#deps.backups.settings(server));
  }

  /**
   * Changes the settings sent: `backups.create`; a change of retention also `backups.delete`, a
   * change of the save commands also `console.write` (and the caller becomes who set them); the
   * limits only an admin (403). A field sent unchanged needs nothing more.
   */
  async saveSettings(
    user: User,
    server: string,
    changes: Partial<Omit<BackupSettings, 'commandsBy'>>,
  ): Promise<BackupSettingsView> {
    await this.#deps.servers.require(user, server, 'server.backups.create');
    if (
      (changes.maxCount !== undefined || changes.maxBytes !== undefined) &&
      !can(user, 'server.configure-host', { permissions: null, server })
    ) {
      throw new AppError('FORBIDDEN', "Only an admin may change a server's backup limits");
    }
    if (changes.savedLine != null) checkSavedLine(changes.savedLine);
    const current = await this.#deps.backups.settings(server);
    const changed = (field: 'keepLast' | 'keepDays' | 'beforeCommands' | 'afterCommands') =>
      changes[field] !== undefined &&
      JSON.stringify(changes[field]) !== JSON.stringify(current[field]);
    if (changed('keepLast') || changed('keepDays')) {
      await this.#requireFor(user, server, 'server.backups.delete', 'retention deletes backups');
    }
    const commandsChanged = changed('beforeCommands') || changed('afterCommands');
    if (commandsChanged) {
      await this.#requireFor(
        user,
        server,
        'server.console.write',
        'save commands are typed into the console',
      );
    }
    const updated: BackupSettings = {
      ...current,
      ...definedFields(changes),
      commandsBy: commandsChanged ? user.id : current.commandsBy,
    };
    await this.#deps.backups.saveSettings(server, updated).catch((error: unknown) => {
      if (error instanceof NoLongerExists) throw notFound('Server');
      throw error;
    });
    return this.#settingsView(updated);
  }

  /** 403 saying why a change of the settings needs `action` beside `backups.create`. */
  async #requireFor(user: User, server: string, action: ServerAction, why: string): Promise<void> {
    try {
      await this.#deps.servers.require(user, server, action);
    } catch (error) {
      if (error instanceof AppError && error.code === 'FORBIDDEN') {
        throw new AppError('FORBIDDEN', `${error.message}: ${why}`);
      }
      throw error;
    }
  }

  async #settingsView(settings: BackupSettings): Promise<BackupSettingsView> {
    const by =
      settings.commandsBy === null ? undefined : await this.#deps.usernameOf(settings.commandsBy);
    return { ...settings, commandsBy: by ?? null };
  }

  /** A server was deleted (its rows with it): its backups' files go too. */
  async removeServer(server: string): Promise<void> {
    await this.#deps.store.removeServer(server);
  }

  async #find(
    user: User,
    server: string,
    id: string,
    action: ServerAction | readonly ServerAction[],
  ): Promise<Backup> {
    await this.#deps.servers.require(user, server, action);
    const backup = await this.#deps.backups.find(server, id);
    if (!backup) throw notFound('Backup');
    return backup;
  }

  async #openFinished(backup: Backup): Promise<StoredFile> {
    if (backup.status !== 'done') {
      throw new AppError('CONFLICT', `The backup is ${backup.status}, not finished`);
    }
    const file = await this.#deps.store.open(backup.server, backup.id);
    if (!file) throw new AppError('NOT_FOUND', "The backup's file is missing from the store");
    return file;
  }

  #claim(server: string, backup: string, action: Job['action'], totalBytes: number | null): Job {
    const current = this.#jobs.get(server);
    if (current) {
      throw new AppError(
        'BACKUP_IN_PROGRESS',
        current.action === 'backup'
          ? 'A backup of this server is being made'
          : 'This server is being restored from a backup',
      );
    }
    const job: Job = { backup, action, bytes: 0, totalBytes, files: 0, toldAt: 0 };
    this.#jobs.set(server, job);
    return job;
  }

  #track(run: Promise<void>): void {
    const tracked = run.finally(() => {
      this.#running.delete(tracked);
    });
    this.#running.add(tracked);
  }

  /** Checks the limits, records the backup and starts making it. */
  async #begin(server: string, input: NewBackup): Promise<{ backup: Backup; done: Promise<void> }> {
    const id = randomUUID();
    const job = this.#claim(server, id, 'backup', null);
    let backup: Backup;
    let settings: BackupSettings;
    let storedBytes: number;
    try {
      settings = await this.#limited(server, await this.#deps.backups.settings(server));
      const existing = await this.#deps.backups.list(server);
      const kept = existing.filter((b) => b.status !== 'failed');
      storedBytes = kept.reduce((sum, b) => sum + (b.bytes ?? 0), 0);
      if (settings.maxCount !== null && kept.length >= settings.maxCount) {
        throw new AppError(
          'BACKUP_LIMIT',
          `The server has ${kept.length} backups, its limit: delete one (or unlock one for retention) first`,
        );
      }
      if (settings.maxBytes !== null && storedBytes >= settings.maxBytes) {
        throw new AppError(
          'BACKUP_LIMIT',
          `The server's backups hold ${storedBytes} bytes, its limit is ${settings.maxBytes}: delete one first`,
        );
      }
      const now = this.#deps.now();
      backup = await this.#deps.backups
        .insert({
          id,
          server,
          name: nameOr(input.name, `Backup ${now.toISOString().slice(0, 16).replace('T', ' ')}`),
          ignore: input.ignore ?? [],
          createdAt: now.toISOString(),
        })
        .catch((error: unknown) => {
          if (error instanceof NoLongerExists) throw notFound('Server');
          throw error;
        });
    } catch (error) {
      this.#jobs.delete(server);
      throw error;
    }
    const done = (async () => {
      try {
        await this.#make(backup, settings, storedBytes, job);
      } finally {
        this.#jobs.delete(server);
      }
    })();
    this.#track(done);
    return { backup, done };
  }

  /** Makes the backup and records how it went; never rejects. */
  async #make(
    backup: Backup,
    settings: BackupSettings,
    storedBytes: number,
    job: Job,
  ): Promise<void> {
    const { server, id } = backup;
    const startedAt = Date.now();
    try {
      job.totalBytes = await this.#deps.host.files.diskUsage(server).catch(() => null);
      const ignore = await ignoreLines(this.#deps.host.files, server, backup.ignore);
      const status = this.#deps.host.status(server);
      const running = status === 'running' || status === 'starting';
      let consistency: BackupConsistency = 'stopped';
      let message: string | null = null;
      if (running && settings.beforeCommands.length === 0) {
        consistency = 'unprepared';
        message =
          'The server was running and has no save commands: files it was writing may be inconsistent';
      }
      // The save commands are typed in the name of whoever set them, while they may still.
      const typist = running ? await this.#typist(server, settings) : null;
      if (typist !== null && !typist.ok) {
        consistency = 'unprepared';
        message = `The save commands were not typed: ${typist.reason}; files the server was writing may be inconsistent`;
        this.#deps.log.warn(
          { server, backup: id, reason: typist.reason },
          'save commands not typed',
        );
      } else if (typist !== null && settings.beforeCommands.length > 0) {
        consistency = await prepareServer(this.#deps.host, server, settings, typist.user.username);
        if (consistency === 'timed-out') {
          message = `The saved line did not come within ${settings.waitSeconds} s: packed anyway`;
        }
      }
      let packed: Packed;
      try {
        packed = await packInto(
          this.#deps.store,
          this.#deps.host.files,
          server,
          id,
          ignore,
          settings,
          storedBytes,
          (files, unpackedBytes) => {
            job.files = files;
            job.bytes = unpackedBytes;
            this.#tell(server, job, 'running', null);
          },
        );
      } finally {
        if (typist?.ok === true && settings.afterCommands.length > 0) {
          const now = this.#deps.host.status(server);
          if (now === 'running' || now === 'starting') {
            for (const line of settings.afterCommands) {
              this.#deps.host.command(server, line, typist.user.username);
            }
          }
        }
      }
      await this.#deps.backups.finish(id, {
        ...packed,
        durationMs: Date.now() - startedAt,
        consistency,
        message,
        finishedAt: this.#deps.now().toISOString(),
      });
      this.#tell(server, job, 'done', null);
      await this.#applyRetention(server, settings);
    } catch (error) {
      const message = this.#reason(error, 'a backup');
      this.#tell(server, job, 'failed', message);
      await this.#deps.backups
        .fail(id, {
          message,
          durationMs: Date.now() - startedAt,
          finishedAt: this.#deps.now().toISOString(),
        })
        .catch((recordError: unknown) => {
          this.#deps.log.error(
            { err: recordError, backup: id },
            'a failed backup could not be recorded',
          );
        });
    }
  }

  /**
   * Who the save commands are typed as: the account that set them, if it still holds
   * `console.write` on the server; null when there are none to type.
   */
  async #typist(server: string, settings: BackupSettings): Promise<Standing | null> {
    if (settings.beforeCommands.length === 0 && settings.afterCommands.length === 0) return null;
    if (settings.commandsBy === null) {
      return { ok: false, reason: 'nobody is recorded as having set them' };
    }
    return this.#deps.servers.stillPermits(settings.commandsBy, server, ['server.console.write']);
  }

  async #restore(backup: Backup, record: ServerRecord, job: Job): Promise<void> {
    const file = await this.#openFinished(backup);
    try {
      // The archive must be the one made: a file changed or damaged since is never unpacked.
      const hash = createHash('sha256');
      for await (const chunk of file.handle.createReadStream({ autoClose: false, start: 0 })) {
        hash.update(chunk as Buffer);
      }
      if (hash.digest('hex') !== backup.checksum) {
        throw new AppError(
          'INVALID_ARCHIVE',
          "The backup's file does not match its checksum: it was changed or damaged since it was made; nothing was restored",
        );
      }
      await this.#deps.host.files
        .replaceFromArchive(
          backup.server,
          file.handle,
          {
            // What the panel packed, exactly: an archive unpacking to more is not this backup.
            maxBytes: backup.unpackedBytes ?? 0,
            maxEntries: backup.entries ?? 0,
            maxRatio: Number.POSITIVE_INFINITY,
            ratioFloorBytes: 0,
          },
          record.limits.diskBytes,
          (written) => {
            job.bytes = written;
            this.#tell(backup.server, job, 'running', null);
          },
        )
        .catch((error: unknown) => {
          if (error instanceof AppError && error.code === 'PAYLOAD_TOO_LARGE') {
            throw new AppError(
              'INVALID_ARCHIVE',
              `The backup's file unpacks to more than was recorded when it was made; nothing was restored (${error.message})`,
            );
          }
          throw error;
        });
    } finally {
      await file.close();
    }
  }

  /**
   * After a backup: unlocked finished backups past the newest `keepLast` unlocked ones or older
   * than `keepDays` are deleted, and failed records older than the newest finished backup.
   */
  async #applyRetention(server: string, settings: BackupSettings): Promise<void> {
    const all = await this.#deps.backups.list(server);
    const cutoff =
      settings.keepDays === null
        ? null
        : this.#deps.now().getTime() - settings.keepDays * 86_400_000;
    const newestDone = all.find((b) => b.status === 'done');
    let unlocked = 0;
    for (const backup of all) {
      if (backup.locked || backup.status === 'running') continue;
      if (backup.status === 'failed') {
        if (newestDone && backup.createdAt < newestDone.createdAt) {
          await this.#deps.backups.deleteUnlocked(server, backup.id);
        }
        continue;
      }
      unlocked += 1;
      const tooMany = settings.keepLast !== null && unlocked > settings.keepLast;
      const tooOld = cutoff !== null && Date.parse(backup.createdAt) < cutoff;
      if (!tooMany && !tooOld) continue;
      if (await this.#deps.backups.deleteUnlocked(server, backup.id)) {
        await this.#deps.store.remove(server, backup.id);
        this.#deps.log.info({ server, backup: backup.id }, 'a backup was deleted by retention');
      }
    }
  }

  /** Tells the console socket how far the job is: at most every 250 ms, and at its end. */
  #tell(server: string, job: Job, status: 'running' | 'done' | 'failed', message: string | null) {
    const now = Date.now();
    if (status === 'running' && now - job.toldAt < PROGRESS_EVERY_MS) return;
    job.toldAt = now;
    this.#deps.events.emit('backup-progress', server, {
      ...progressOf(job),
      status,
      message,
    });
  }

  #reason(error: unknown, what: string): string {
    if (error instanceof AppError) return error.message;
    this.#deps.log.error({ err: error }, `${what} failed`);
    return `${what[0]?.toUpperCase() ?? ''}${what.slice(1)} failed: ${error instanceof Error ? error.message : String(error)}`;
  }

  #view(backup: Backup): BackupView {
    const job = this.#jobs.get(backup.server);
    return { ...backup, progress: job?.backup === backup.id ? progressOf(job) : null };
  }
}

/** The name given, unless it is blank. */
const nameOr = (given: string | undefined, fallback: string): string => {
  const name = given?.trim() ?? '';
  return name === '' ? fallback : name;
};

function progressOf(job: Job): BackupProgress {
  return {
    backup: job.backup,
    action: job.action,
    bytes: job.bytes,
    totalBytes: job.totalBytes,
    files: job.files,
  };
}

/** 400 unless the saved line is text, or `regex:` a pattern RE2 runs (in linear time). */
function checkSavedLine(line: string): void {
  if (!line.startsWith('regex:')) return;
  const compiled = compileLinePattern(line.slice('regex:'.length));
  if (!compiled.ok) {
    const message = `the pattern ${compiled.reason}`;
    throw new AppError('VALIDATION_FAILED', `savedLine: ${message}`, {
      details: [{ path: 'body/savedLine', message }],
    });
  }
}
