/**
 * The SFTP server inside the panel (docs/sftp.md): ssh2's server on `SFTP_ADDRESS:SFTP_PORT`
 * with the panel's host key, serving the SFTP subsystem only (no shell, no exec, no forwarding).
 *
 * Limits, so that nobody holds the panel's memory or its sign-in checks:
 * - connections per client address, signed in or not (`SFTP_MAX_CONNECTIONS_PER_ADDRESS`);
 * - signed-in sessions per account (`SFTP_MAX_SESSIONS_PER_USER`);
 * - `AUTH_TIMEOUT_MS` to sign in and `MAX_AUTH_ATTEMPTS` credentials per connection (OpenSSH's
 *   LoginGraceTime and MaxAuthTries), `MAX_CHANNELS` SFTP channels per connection;
 * - `SFTP_IDLE_SECONDS` without a request, and the session ends.
 *
 * A session lives only as long as its rights: when an account's access changes (ban, deletion,
 * new password, a revoked API key, a deleted SSH key, permissions taken away) or its server is
 * deleted, every session it no longer may hold is ended at once; the rest ask for their rights
 * again at the next request. Ending a session aborts its uploads: files stay as they were.
 */
import { statfs } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import ssh2, { type AuthContext, type Connection, type SFTPWrapper } from 'ssh2';
import type { SftpConfig } from '../../config.js';
import type { NewAuditEntry } from '../../domain/audit.js';
import { AppError } from '../../errors.js';
import type { PanelEvents } from '../../events.js';
import type { Logger } from '../../log.js';
import { GrantedFiles, type FileRights } from './granted-files.js';
import type { HostKey } from './host-key.js';
import type { SessionFiles } from './session-files.js';
import type { Grant, SftpAccess } from './sftp-access.js';

/** To sign in, from the first byte (OpenSSH's LoginGraceTime is 120 s). */
const AUTH_TIMEOUT_MS = 60_000;
/** Credentials tried on one connection before it is closed (OpenSSH's MaxAuthTries is 6). */
const MAX_AUTH_ATTEMPTS = 6;
/** SFTP channels one connection may open at once (clients open one, FileZilla a few). */
const MAX_CHANNELS = 4;
/** How often every session's rights are asked again (an API key that expires sends no event). */
const SWEEP_MS = 30_000;
const METHODS: ('password' | 'publickey')[] = ['publickey', 'password'];

/** One SFTP channel being answered (src/modules/sftp/sftp-session.ts). */
export interface Served {
  close(): Promise<void>;
}

/** Answers the requests of one SFTP channel with `files`. */
export type Serve = (
  stream: SFTPWrapper,
  files: SessionFiles,
  options: { readonly onActivity: () => void; readonly log: Logger; readonly owner: string },
) => Served;

/** What an SftpServer is made from. */
export interface SftpServerDeps {
  readonly config: SftpConfig;
  readonly hostKey: HostKey;
  readonly access: SftpAccess;
  /** The files and limits of `user` on `server` now (the files service's `access`). */
  readonly rights: (
    user: Grant['user'],
    server: string,
    need: 'server.files.read' | 'server.files.write',
  ) => Promise<Omit<FileRights, 'user'>>;
  readonly serve: Serve;
  readonly events: PanelEvents;
  readonly audit: (entry: NewAuditEntry) => Promise<void>;
  /** The folder the servers' folders are in, for the free space of the disk. */
  readonly serversDir: string;
  readonly log: Logger;
  readonly now: () => number;
}

/** A connection, signed in or not yet. */
interface Live {
  readonly client: Connection;
  readonly address: string;
  grant: Grant | null;
  files: GrantedFiles | null;
  readonly served: Set<Served>;
  idle: NodeJS.Timeout | null;
  ended: boolean;
}

export class SftpServer {
  readonly #deps: SftpServerDeps;
  readonly #server: ssh2.Server;
  readonly #live = new Set<Live>();
  #sweep: NodeJS.Timeout | null = null;
  #closing = false;

  constructor(deps: SftpServerDeps) {
    this.#deps = deps;
    this.#server = new ssh2.Server(
      { hostKeys: [deps.hostKey.privateKey], ident: 'game-panel' },
      (client, info) => {
        this.#connected(client, info.ip);
      },
    );
    deps.events.on('access-changed', this.#onAccessChanged);
    deps.events.on('server-deleted', this.#onServerDeleted);
  }

  /** The port it listens on and its host key's fingerprint (for the UI). */
  info(): { port: number; fingerprint: string } {
    const address = this.#server.address() as AddressInfo | null;
    return {
      port: address?.port ?? this.#deps.config.port,
      fingerprint: this.#deps.hostKey.fingerprint,
    };
  }

  /** Signed-in sessions now. */
  sessions(): number {
    let count = 0;
    for (const live of this.#live) if (live.grant !== null) count += 1;
    return count;
  }

  async listen(): Promise<AddressInfo> {
    const { address, port } = this.#deps.config;
    await new Promise<void>((resolve, reject) => {
      const failed = (error: Error) => {
        reject(error);
      };
      this.#server.once('error', failed);
      this.#server.listen(port, address, () => {
        this.#server.off('error', failed);
        resolve();
      });
    });
    this.#server.on('error', (error: Error) => {
      this.#deps.log.error({ err: error }, 'the SFTP server failed');
    });
    this.#sweep = setInterval(() => {
      void this.#recheckAll();
    }, SWEEP_MS);
    this.#sweep.unref();
    return this.#server.address() as AddressInfo;
  }

  /** Stops listening and ends every session (their uploads aborted). */
  async close(): Promise<void> {
    this.#closing = true;
    this.#deps.events.off('access-changed', this.#onAccessChanged);
    this.#deps.events.off('server-deleted', this.#onServerDeleted);
    if (this.#sweep) clearInterval(this.#sweep);
    // ssh2's server has no `listening` of its own: close is asked always (a server that never
    // listened answers at once, with an error that is of no interest here).
    const closed = new Promise<void>((resolve) => {
      this.#server.close(() => {
        resolve();
      });
    });
    await Promise.all([...this.#live].map((live) => this.#end(live, 'the panel is stopping')));
    await closed;
  }

  #connected(client: Connection, address: string): void {
    const live: Live = {
      client,
      address,
      grant: null,
      files: null,
      served: new Set(),
      idle: null,
      ended: false,
    };
    client.on('error', (error: Error) => {
      this.#deps.log.debug({ err: error, address }, 'an SFTP connection failed');
    });
    client.on('close', () => {
      void this.#end(live, null);
    });
    let fromAddress = 0;
    for (const other of this.#live) if (other.address === address) fromAddress += 1;
    this.#live.add(live);
    if (this.#closing || fromAddress >= this.#deps.config.maxConnectionsPerAddress) {
      this.#deps.log.warn({ address }, 'an SFTP connection was refused: too many from its address');
      client.end();
      return;
    }
    const grace = setTimeout(() => {
      if (live.grant === null) client.end();
    }, AUTH_TIMEOUT_MS);
    grace.unref();
    let attempts = 0;
    client.on('authentication', (context: AuthContext) => {
      if (context.method !== 'password' && context.method !== 'publickey') {
        context.reject(METHODS);
        return;
      }
      // A key only offered (no signature yet) is not an attempt: clients offer every key.
      const offered = context.method === 'publickey' && context.signature === undefined;
      if (!offered) attempts += 1;
      if (attempts > MAX_AUTH_ATTEMPTS) {
        context.reject();
        client.end();
        return;
      }
      void this.#authenticate(live, context).catch((error: unknown) => {
        this.#deps.log.error({ err: error, address }, 'an SFTP sign-in failed');
        context.reject(METHODS);
      });
    });
    client.on('ready', () => {
      clearTimeout(grace);
      this.#touch(live);
      client.on('session', (accept) => {
        const session = accept();
        session.on('sftp', (acceptSftp, reject) => {
          if (live.files === null || live.ended || live.served.size >= MAX_CHANNELS) {
            reject();
            return;
          }
          const stream = acceptSftp();
          let served: Served;
          try {
            served = this.#deps.serve(stream, live.files, {
              onActivity: () => {
                this.#touch(live);
              },
              log: this.#deps.log,
              owner: live.grant?.user.username ?? 'server',
            });
          } catch (error) {
            // ssh2 is not what the protocol was written for (sftp-wire.ts): no session.
            this.#deps.log.error({ err: error }, 'an SFTP channel could not be served');
            void this.#end(live, 'internal error');
            return;
          }
          live.served.add(served);
          stream.on('close', () => {
            live.served.delete(served);
            void served.close();
          });
        });
      });
      // Shells, commands, forwarding and agent requests have no listener: ssh2 refuses them.
    });
  }

  async #authenticate(live: Live, context: AuthContext): Promise<void> {
    const { access } = this.#deps;
    let outcome;
    if (context.method === 'password') {
      outcome = await access.password(context.username, context.password, live.address);
    } else if (context.method === 'publickey') {
      const { signature, blob, hashAlgo } = context;
      if (signature === undefined || blob === undefined) {
        if (await access.hasKey(context.username, context.key.data)) context.accept();
        else context.reject(METHODS);
        return;
      }
      outcome = await access.publicKey(
        context.username,
        context.key.data,
        // ssh2 answers an Error, which is truthy, when it cannot check (its types say boolean).
        (key) => (key.verify(blob, signature, hashAlgo) as unknown) === true,
        live.address,
      );
    } else {
      context.reject(METHODS);
      return;
    }
    if (live.ended) return;
    if (outcome.kind === 'granted') {
      const { grant } = outcome;
      let held = 0;
      for (const other of this.#live) if (other.grant?.user.id === grant.user.id) held += 1;
      if (held >= this.#deps.config.maxSessionsPerUser) {
        banner(
          live.client,
          `Too many SFTP sessions of ${grant.user.username} (${held}); close one first.`,
        );
        context.reject(METHODS);
        return;
      }
      live.grant = grant;
      live.files = this.#filesOf(grant, live.address);
      context.accept();
      return;
    }
    if (outcome.message !== null) banner(live.client, outcome.message);
    context.reject(METHODS);
  }

  #filesOf(grant: Grant, address: string): GrantedFiles {
    const { access, rights, audit, serversDir, now } = this.#deps;
    return new GrantedFiles({
      grant,
      address,
      rights: async (need) => {
        const user = await access.current(grant);
        if (user === null) {
          // The session may no longer be: it ends (at once when an event said so already).
          void this.#endGrant(grant);
          throw new AppError('FORBIDDEN', 'This session may no longer use the server');
        }
        return { user, ...(await rights(user, grant.server, need)) };
      },
      audit,
      disk: async () => {
        const stats = await statfs(serversDir);
        return { freeBytes: stats.bavail * stats.bsize, totalBytes: stats.blocks * stats.bsize };
      },
      now,
    });
  }

  #touch(live: Live): void {
    if (live.idle) clearTimeout(live.idle);
    live.idle = setTimeout(() => {
      void this.#end(live, 'idle');
    }, this.#deps.config.idleSeconds * 1000);
    live.idle.unref();
  }

  /** Ends a connection: its channels first (uploads aborted), then the connection. */
  async #end(live: Live, reason: string | null): Promise<void> {
    if (live.ended) return;
    live.ended = true;
    this.#live.delete(live);
    if (live.idle) clearTimeout(live.idle);
    const served = [...live.served];
    live.served.clear();
    await Promise.allSettled(served.map((one) => one.close()));
    if (reason !== null && live.grant !== null) {
      this.#deps.log.info(
        { user: live.grant.user.username, server: live.grant.server, reason },
        'an SFTP session was ended',
      );
    }
    live.client.end();
  }

  async #endGrant(grant: Grant): Promise<void> {
    for (const live of [...this.#live]) if (live.grant === grant) await this.#end(live, 'access');
  }

  /** Asks again whether each session of `userId` (all when null) may still be held. */
  async #recheck(userId: number | null): Promise<void> {
    const checks = [...this.#live]
      .filter((live) => live.grant !== null && (userId === null || live.grant.user.id === userId))
      .map(async (live) => {
        live.files?.invalidate();
        const grant = live.grant;
        if (grant === null) return;
        try {
          if ((await this.#deps.access.current(grant)) === null) {
            await this.#end(live, 'access changed');
          }
        } catch (error) {
          this.#deps.log.error(
            { err: error },
            'the rights of an SFTP session could not be checked',
          );
        }
      });
    await Promise.all(checks);
  }

  #recheckAll(): Promise<void> {
    return this.#recheck(null);
  }

  readonly #onAccessChanged = (userId: number): void => {
    void this.#recheck(userId);
  };

  readonly #onServerDeleted = (name: string): void => {
    for (const live of [...this.#live]) {
      if (live.grant?.server === name) void this.#end(live, 'server deleted');
    }
  };
}

/**
 * Sends the client a line to show (SSH_MSG_USERAUTH_BANNER, which OpenSSH, FileZilla and WinSCP
 * print) before a refusal: SSH has no other way to say why. ssh2 sends banners only before the
 * first attempt, so the message is written through its protocol object; when that is not there,
 * the refusal goes without words.
 */
function banner(client: Connection, text: string): void {
  try {
    const protocol = (client as unknown as { _protocol?: BannerProtocol })._protocol;
    if (protocol === undefined) return;
    const body = `${text}\r\n`;
    const length = Buffer.byteLength(body);
    const writer = protocol._packetRW.write;
    const start = writer.allocStart;
    const packet = writer.alloc(1 + 4 + length + 4);
    packet[start] = USERAUTH_BANNER;
    packet.writeUInt32BE(length, start + 1);
    packet.write(body, start + 5, length, 'utf8');
    packet.writeUInt32BE(0, start + 5 + length);
    sshUtils().sendPacket(protocol, writer.finalize(packet));
  } catch {
    // Without words, then.
  }
}

const USERAUTH_BANNER = 53;

interface BannerProtocol {
  readonly _packetRW: {
    readonly write: {
      readonly allocStart: number;
      alloc(size: number): Buffer;
      finalize(packet: Buffer): Buffer;
    };
  };
}

let utilsModule: { sendPacket(protocol: BannerProtocol, packet: Buffer): void } | undefined;
const sshUtils = () =>
  (utilsModule ??= createRequire(import.meta.url)('ssh2/lib/protocol/utils.js') as {
    sendPacket(protocol: BannerProtocol, packet: Buffer): void;
  });
