/**
 * How the panel reaches a Docker engine and reads its answers: dockerode's options for
 * `DOCKER_HOST` (a unix socket, or TCP with TLS from `DOCKER_CERT_PATH`; nothing taken from the
 * environment), and the errors of a call: the HTTP status the engine answered, its reason, and a
 * connection that failed, which {@link engineCall} turns into {@link RuntimeUnavailableError}.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type Docker from 'dockerode';
import { ConfigError } from '../../../config.js';
import { withDeadline } from '../deadline.js';
import { RuntimeUnavailableError } from '../runtime.js';

/** Errors of the connection itself: the engine is down, missing or not answering. */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOENT',
  'EACCES',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
]);

/** How dockerode reaches the engine of `DOCKER_HOST`; every field is set, so none comes from the environment. */
export function engineOptions(
  dockerHost: string | null,
  certPath: string | null,
): Docker.DockerOptions {
  const none = {
    socketPath: undefined,
    host: undefined,
    port: undefined,
    protocol: undefined,
    ca: undefined,
    cert: undefined,
    key: undefined,
    timeout: undefined,
    version: undefined,
  };
  if (dockerHost === null || dockerHost.startsWith('unix://')) {
    const socketPath = dockerHost?.slice('unix://'.length) ?? '';
    return { ...none, socketPath: socketPath === '' ? '/var/run/docker.sock' : socketPath };
  }
  const url = new URL(dockerHost.replace(/^tcp:/, 'http:'));
  const tls = url.protocol === 'https:';
  const certificates = tls && certPath !== null ? readCertificates(certPath) : {};
  return {
    ...none,
    host: url.hostname,
    port: url.port || (tls ? 2376 : 2375),
    protocol: tls ? 'https' : 'http',
    ...certificates,
  };
}

function readCertificates(certPath: string) {
  try {
    return {
      ca: readFileSync(path.join(certPath, 'ca.pem')),
      cert: readFileSync(path.join(certPath, 'cert.pem')),
      key: readFileSync(path.join(certPath, 'key.pem')),
    };
  } catch (error) {
    throw new ConfigError(
      'DOCKER_CERT_PATH',
      `cannot read ca.pem, cert.pem and key.pem there (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
    );
  }
}

/** The HTTP status the engine answered with, if it answered. */
export const statusOf = (error: unknown): number | undefined =>
  (error as { statusCode?: unknown } | null)?.statusCode as number | undefined;

/** What the engine said, without dockerode's "(HTTP code …)" prefix. */
export function reasonOf(error: unknown): string {
  const json = (error as { json?: unknown } | null)?.json;
  if (json !== null && typeof json === 'object' && 'message' in json) {
    return String(json.message);
  }
  return error instanceof Error ? error.message : String(error);
}

function unreachable(error: unknown): boolean {
  if (statusOf(error) !== undefined) return false;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && UNREACHABLE_CODES.has(code)) return true;
  return error instanceof Error && /timeout|socket hang up/i.test(error.message);
}

/** A call to the engine, run through {@link engineCall}. */
export type EngineCall = <T>(task: () => Promise<T>) => Promise<T>;

/**
 * How long a short call to an engine (inspect, create, remove, list) may take, on this machine's
 * engine and a node's alike; waits, attach streams, pulls and imports have limits of their own.
 */
export const ENGINE_CALL_MS = 15_000;

/**
 * A short call to an engine, bounded: `deadline(call, 'make the volume')` is `call`, or, once
 * `ms` (ENGINE_CALL_MS by default) have passed, a rejection with the error its caller throws for
 * the engine's failures, saying `the engine did not make the volume in time`.
 */
export type EngineDeadline = <T>(call: Promise<T>, what: string, ms?: number) => Promise<T>;

/** The {@link EngineDeadline} whose rejections are `failure(message)`. */
export const engineDeadline =
  (failure: (message: string) => Error): EngineDeadline =>
  (call, what, ms = ENGINE_CALL_MS) =>
    withDeadline(call, ms, () => failure(`the engine did not ${what} in time`));

/**
 * Runs calls to the engine at `where`; a connection failure becomes
 * {@link RuntimeUnavailableError}. With `deadlineMs`, a call that has not settled by then is
 * given up as one too: a socket timeout alone does not bound every transport (over SSH a silent
 * call has none, docs/nodes.md "Servers on a node"). What the engine does with a call given up
 * on is not known; callers make each step safe to repeat.
 */
export function engineCall(
  where: string,
  { deadlineMs }: { deadlineMs?: number } = {},
): EngineCall {
  return async <T>(task: () => Promise<T>): Promise<T> => {
    try {
      const pending = task();
      return await (deadlineMs === undefined
        ? pending
        : withDeadline(
            pending,
            deadlineMs,
            () =>
              new RuntimeUnavailableError(
                `The Docker engine at ${where} did not answer within ${Math.round(deadlineMs / 1000)} s`,
              ),
          ));
    } catch (error) {
      if (error instanceof RuntimeUnavailableError) throw error;
      if (unreachable(error)) {
        const code = (error as { code?: unknown }).code;
        throw new RuntimeUnavailableError(
          `The Docker engine at ${where} cannot be reached (${typeof code === 'string' ? code : reasonOf(error)})`,
          { cause: error },
        );
      }
      throw error;
    }
  };
}
