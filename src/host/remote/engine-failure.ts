/**
 * What a failed call to a node's engine means to a person (src/host/remote/engine-connection.ts):
 * a code of a closed set, and a reason that names the address, the side at fault and what to do,
 * from the errors Node's TLS, ssh2 and dockerode throw. Reasons never hold key material.
 */
import { reasonOf, statusOf } from '../runtime/docker/engine.js';

/** Why a connection cannot be used or a probe failed: a closed set. */
export type EngineFailureCode =
  /** The connection's settings are not usable (validateConnection of engine-connection.ts). */
  | 'NODE_INVALID'
  /** Nothing answers at the address: refused, no route, a name that does not resolve. */
  | 'NODE_UNREACHABLE'
  /** No answer within the deadline. */
  | 'NODE_TIMEOUT'
  /** The TLS handshake failed: either side refused the other's certificate, or no TLS there. */
  | 'NODE_TLS_REFUSED'
  /** The SSH server refused the key, or showed a host key other than the one pinned. */
  | 'NODE_SSH_REFUSED'
  /** The engine was reached and answered an error, or something else went wrong. */
  | 'NODE_ENGINE_ERROR';

/** Where a node's engine is, as an address names it. */
export type Endpoint =
  | { readonly kind: 'tcp'; readonly host: string; readonly port: number }
  | { readonly kind: 'ssh'; readonly host: string; readonly port: number; readonly user: string };

/** A call that did not end within its deadline. */
export class DeadlinePassed extends Error {}

/** The node's address as reasons name it. */
function placeOf(endpoint: Endpoint): string {
  const host = endpoint.host.includes(':') ? `[${endpoint.host}]` : endpoint.host;
  return endpoint.kind === 'ssh'
    ? `${endpoint.user}@${host}:${endpoint.port}`
    : `${host}:${endpoint.port}`;
}

const seconds = (ms: number) => `${Number((ms / 1000).toFixed(1))} s`;

/** What a person can do about a failed call to the engine at `endpoint`. */
export function failureOf(
  error: unknown,
  endpoint: Endpoint,
  deadlineMs: number,
): { code: EngineFailureCode; reason: string } {
  const place = placeOf(endpoint);
  if (error instanceof DeadlinePassed)
    return {
      code: 'NODE_TIMEOUT',
      reason: `no answer from ${place} within ${seconds(deadlineMs)}`,
    };
  const status = statusOf(error);
  if (status !== undefined)
    return {
      code: 'NODE_ENGINE_ERROR',
      reason: `the engine at ${place} answered ${status}: ${reasonOf(error)}`,
    };
  const { code, level, message } = (error ?? {}) as {
    code?: unknown;
    level?: unknown;
    message?: unknown;
  };
  const text = typeof message === 'string' ? message : '';
  const what = endpoint.kind === 'ssh' ? 'SSH server' : 'engine';
  if (level === 'client-authentication')
    return {
      code: 'NODE_SSH_REFUSED',
      reason: `the SSH server at ${place} refused the key: is its public key in the authorized_keys of ${endpoint.kind === 'ssh' ? endpoint.user : 'the user'}?`,
    };
  if (/host denied/i.test(text))
    return {
      code: 'NODE_SSH_REFUSED',
      reason: `the SSH server at ${place} showed a host key other than the one given (sshHostKey): the node was reinstalled, or someone is in between`,
    };
  if (level === 'client-timeout' || code === 'ETIMEDOUT' || /timed? ?out/i.test(text))
    return {
      code: 'NODE_TIMEOUT',
      reason: `no answer from ${place} within ${seconds(deadlineMs)}`,
    };
  switch (code) {
    case 'ECONNREFUSED':
      return {
        code: 'NODE_UNREACHABLE',
        reason: `connection refused at ${place}: no ${what} listens there${endpoint.kind === 'tcp' ? ` (is dockerd running, with --host tcp://…:${endpoint.port}?)` : ''}`,
      };
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return { code: 'NODE_UNREACHABLE', reason: `no route to ${endpoint.host} from the panel` };
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return { code: 'NODE_UNREACHABLE', reason: `the name ${endpoint.host} does not resolve` };
    case 'ECONNRESET':
    case 'EPIPE':
      return { code: 'NODE_UNREACHABLE', reason: closedEarly(endpoint, place) };
  }
  if (typeof code === 'string') {
    const alert = /^ERR_SSL_(?:SSLV3|TLSV1|TLSV13)_ALERT_(.+)$/.exec(code)?.[1];
    if (alert !== undefined)
      return {
        code: 'NODE_TLS_REFUSED',
        reason: `the engine at ${place} refused the client certificate (TLS alert: ${alert.toLowerCase().replaceAll('_', ' ')}): it must be signed by the CA the engine trusts (its --tlscacert)`,
      };
    const server = SERVER_CERTIFICATE.get(code);
    if (server !== undefined) return { code: 'NODE_TLS_REFUSED', reason: server(place, error) };
    if (code === 'EPROTO' || /wrong version number|packet length too long/i.test(text))
      return {
        code: 'NODE_TLS_REFUSED',
        reason: `${place} does not speak TLS: is the engine started with --tlsverify on that port?`,
      };
    if (code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_') || code.includes('CERT'))
      return {
        code: 'NODE_TLS_REFUSED',
        reason: `the TLS handshake with ${place} failed (${code})`,
      };
  }
  if (/socket hang up/i.test(text))
    return { code: 'NODE_UNREACHABLE', reason: closedEarly(endpoint, place) };
  return {
    code: 'NODE_ENGINE_ERROR',
    reason: `the engine at ${place} could not be asked: ${text.split('\n')[0]?.slice(0, 200) ?? ''}`,
  };
}

function closedEarly(endpoint: Endpoint, place: string): string {
  return endpoint.kind === 'ssh'
    ? `the SSH session to ${place} ended before the engine answered: is the docker CLI installed there (the panel runs \`docker system dial-stdio\`), and may ${endpoint.user} use the engine?`
    : `the connection to ${place} was closed before the engine answered`;
}

/** Node's errors about the engine's certificate, and what they mean to a person. */
const SERVER_CERTIFICATE = new Map<string, (place: string, error: unknown) => string>([
  ...[
    'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
    'UNABLE_TO_GET_ISSUER_CERT',
    'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
    'SELF_SIGNED_CERT_IN_CHAIN',
    'DEPTH_ZERO_SELF_SIGNED_CERT',
    'CERT_SIGNATURE_FAILURE',
  ].map(
    (code) =>
      [
        code,
        (place: string) =>
          `the engine's certificate at ${place} is not signed by the CA given (ca)`,
      ] as const,
  ),
  ['CERT_HAS_EXPIRED', (place) => `the engine's certificate at ${place} has expired`],
  ['CERT_NOT_YET_VALID', (place) => `the engine's certificate at ${place} is not valid yet`],
  [
    'ERR_TLS_CERT_ALTNAME_INVALID',
    (place, error) => {
      const why = (error as { reason?: unknown }).reason;
      return `the engine's certificate is not for ${place}${typeof why === 'string' ? ` (${why})` : ''}: its subjectAltName must name the address the panel uses`;
    },
  ],
]);
