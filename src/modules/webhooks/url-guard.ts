/**
 * Where a webhook may point (SSRF): an http(s) URL whose host resolves only to public addresses,
 * none of them the panel's own, unless WEBHOOK_ALLOWED_HOSTS names the host (docs/webhooks.md).
 * Checked when a URL is registered and again before every attempt; an attempt then connects to
 * the very address that was checked (`pinnedLookup`), so a DNS answer that changes in between
 * (DNS rebinding) cannot send it elsewhere.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { networkInterfaces } from 'node:os';
import type { AllowedHost } from '../../config.js';
import { AppError } from '../../errors.js';

export interface ResolvedAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

/** Every address a host name resolves to (`dns.lookup` with `all`, by default). */
export type Resolver = (host: string) => Promise<readonly ResolvedAddress[]>;

/** Where one attempt goes: the URL and the checked address to connect to. */
export interface Target {
  readonly url: URL;
  readonly address: ResolvedAddress;
}

/** How long a host name may take to resolve: within the time a request is answered. */
const RESOLVE_TIMEOUT_MS = 3_000;

/** Addresses that are not the public internet: loopback, private, link-local, CGNAT, and so on. */
const NON_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network", 0.0.0.0 included
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata services)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast included
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 96], // unspecified, loopback and the deprecated IPv4-compatible addresses
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard-only
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique-local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv6');
}

/**
 * Whether `address` is on the public internet. An IPv6 address that embeds an IPv4 one is judged
 * by the IPv4 address it reaches: IPv4-mapped `::ffff:a.b.c.d` and IPv4-translated
 * `::ffff:0:a.b.c.d`, the NAT64 well-known prefix `64:ff9b::/96` and 6to4 `2002:AABB:CCDD::/48`
 * (a relay or NAT64 gateway forwards to that IPv4 address). Teredo `2001::/32` is refused whole:
 * it is deprecated and its relay path reaches anywhere (docs/webhooks.md).
 */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  if (family === 4) return !NON_PUBLIC.check(address, 'ipv4');
  const bytes = ipv6Bytes(address);
  if (bytes === null) return false;
  const embedded = embeddedIpv4(bytes);
  if (embedded !== null) return !NON_PUBLIC.check(embedded, 'ipv4');
  return !NON_PUBLIC.check(address, 'ipv6');
}

/** The 16 bytes of an IPv6 address (`::` and a trailing dotted quad allowed, zone dropped). */
function ipv6Bytes(address: string): Uint8Array | null {
  let text = address.replace(/%.*$/, '');
  const tail: number[] = [];
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted !== null) {
    const quad = (dotted[2] ?? '').split('.').map(Number);
    if (quad.some((part) => part > 255)) return null;
    tail.push(...quad);
    text = `${dotted[1] ?? ''}0:0`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const groups = (half: string | undefined): string[] =>
    half === undefined || half === '' ? [] : half.split(':');
  const head = groups(halves[0]);
  const rest = groups(halves[1]);
  const missing = 8 - head.length - rest.length;
  if (halves.length === 1 ? missing !== 0 : missing < 0) return null;
  const all = [...head, ...Array<string>(halves.length === 1 ? 0 : missing).fill('0'), ...rest];
  const bytes = new Uint8Array(16);
  for (const [index, group] of all.entries()) {
    if (!/^[0-9a-f]{1,4}$/i.test(group)) return null;
    const value = Number.parseInt(group, 16);
    bytes[index * 2] = value >> 8;
    bytes[index * 2 + 1] = value & 0xff;
  }
  if (tail.length === 4) bytes.set(tail, 12);
  return bytes;
}

const startsWith = (bytes: Uint8Array, prefix: readonly number[]): boolean =>
  prefix.every((byte, index) => bytes[index] === byte);

const quad = (bytes: Uint8Array, from: number): string =>
  Array.from(bytes.subarray(from, from + 4)).join('.');

/**
 * The IPv4 address an IPv6 address leads to, when it embeds one; Teredo answers an address that
 * is never public (0.0.0.0), so it is refused.
 */
function embeddedIpv4(bytes: Uint8Array): string | null {
  const zeros = (count: number): number[] => Array<number>(count).fill(0);
  if (startsWith(bytes, [...zeros(10), 0xff, 0xff])) return quad(bytes, 12); // ::ffff:a.b.c.d
  if (startsWith(bytes, [...zeros(8), 0xff, 0xff, 0, 0])) return quad(bytes, 12); // ::ffff:0:a.b.c.d
  if (startsWith(bytes, [0, 0x64, 0xff, 0x9b, ...zeros(8)])) return quad(bytes, 12); // 64:ff9b::/96
  if (startsWith(bytes, [0x20, 0x02])) return quad(bytes, 2); // 6to4 2002::/16
  if (startsWith(bytes, [0x20, 0x01, 0, 0])) return '0.0.0.0'; // Teredo 2001::/32
  return null;
}

const defaultResolver: Resolver = async (host) => {
  const found = await dnsLookup(host, { all: true, verbatim: true });
  return found.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
};

const refused = (message: string): AppError =>
  new AppError('URL_NOT_ALLOWED', message, { details: [{ path: 'body/url', message }] });

/** The host of a URL as compared and resolved: lower case, IPv6 without brackets. */
const hostOf = (url: URL): string =>
  url.hostname
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '')
    .toLowerCase();

const portOf = (url: URL): number =>
  url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);

/** What a UrlGuard is made from. */
export interface UrlGuardDeps {
  /** WEBHOOK_ALLOWED_HOSTS. */
  readonly allowed: readonly AllowedHost[];
  /** The panel's own host names and addresses (its listen address, PUBLIC_URL's host). */
  readonly ownHosts: readonly string[];
  readonly resolve?: Resolver;
  readonly resolveTimeoutMs?: number;
}

export class UrlGuard {
  readonly #deps: UrlGuardDeps;

  constructor(deps: UrlGuardDeps) {
    this.#deps = deps;
  }

  /**
   * The parsed URL and the address an attempt connects to; 400 `URL_NOT_ALLOWED` (naming why)
   * for a URL that is not http(s), carries credentials, or reaches an address it may not.
   */
  async check(raw: string): Promise<Target> {
    const url = parseWebhookUrl(raw);
    const host = hostOf(url);
    const allowed = this.#allowed(host, portOf(url));
    if (!allowed && this.#deps.ownHosts.some((own) => own.toLowerCase() === host)) {
      throw refused(`${host} is the panel's own host`);
    }
    const addresses = await this.#resolve(host);
    if (!allowed) {
      const own = ownAddresses();
      for (const { address } of addresses) {
        if (!isPublicAddress(address)) {
          throw refused(
            `${host === address ? host : `${host} resolves to ${address}, which`} is not a public address; allow it with WEBHOOK_ALLOWED_HOSTS`,
          );
        }
        if (own.has(address)) throw refused(`${host} is the panel's own host`);
      }
    }
    const first = addresses[0];
    if (first === undefined) throw refused(`${host} has no address`);
    return { url, address: first };
  }

  #allowed(host: string, port: number): boolean {
    return this.#deps.allowed.some(
      (entry) => entry.host === host && (entry.port === null || entry.port === port),
    );
  }

  async #resolve(host: string): Promise<readonly ResolvedAddress[]> {
    const family = isIP(host);
    if (family !== 0) return [{ address: host, family: family === 6 ? 6 : 4 }];
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        reject(new Error('timed out'));
      }, this.#deps.resolveTimeoutMs ?? RESOLVE_TIMEOUT_MS);
    });
    try {
      const found = await Promise.race([(this.#deps.resolve ?? defaultResolver)(host), timeout]);
      if (found.length === 0) throw new Error('no address');
      return found;
    } catch (error) {
      const reason =
        error instanceof Error && 'code' in error && typeof error.code === 'string'
          ? error.code
          : error instanceof Error
            ? error.message
            : 'unknown error';
      throw refused(`${host} cannot be resolved (${reason})`);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** An absolute http(s) URL without credentials, or 400 naming what is wrong. */
export function parseWebhookUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new AppError('VALIDATION_FAILED', 'The URL is not an absolute URL', {
      details: [{ path: 'body/url', message: 'must be an absolute http(s) URL' }],
    });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw refused(`A webhook URL must be http or https, not ${url.protocol.replace(/:$/, '')}`);
  }
  if (url.username !== '' || url.password !== '') {
    throw refused('A webhook URL may not carry a user name or password');
  }
  return url;
}

/** The addresses of this machine's interfaces, as they are now. */
function ownAddresses(): Set<string> {
  const own = new Set<string>();
  for (const list of Object.values(networkInterfaces())) {
    for (const entry of list ?? []) own.add(entry.address.replace(/%.*$/, ''));
  }
  return own;
}

/** A `lookup` for http(s).request that answers the checked address, whatever DNS says now. */
export function pinnedLookup(target: ResolvedAddress): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all === true) callback(null, [target]);
    else callback(null, target.address, target.family);
  };
}
