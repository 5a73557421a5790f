/**
 * Reads an SSH public key as people paste it: the line of their `id_ed25519.pub` (with or without
 * its comment), or the SSH2 block PuTTYgen saves (RFC 4716). Answers the key in OpenSSH's
 * one-line form without the comment, its wire blob and its fingerprint, or, for anything else, the
 * problem in words a person reads and can act on (a private key, a certificate, DSA, short RSA,
 * several keys, authorized_keys options, a cut line, garbage). The text pasted is never part of a
 * problem: it may be a private key.
 */
import { createHash } from 'node:crypto';
// ssh2 is CommonJS: Node's ESM loader finds no named exports in it.
import ssh2 from 'ssh2';
import { isSshKeyAlgorithm, type SshKeyAlgorithm } from '../../domain/ssh-key.js';

export const MIN_RSA_BITS = 2048;
/** OpenSSH's own ceiling (SSH_RSA_MAXIMUM_MODULUS_SIZE). */
export const MAX_RSA_BITS = 16384;

export interface PublicKey {
  readonly algorithm: SshKeyAlgorithm;
  /** The key's SSH wire blob (RFC 4253 §6.6): what a client offers when it signs in. */
  readonly blob: Buffer;
  /** `<algorithm> <base64 of blob>`: OpenSSH's form, without a comment. */
  readonly line: string;
  readonly fingerprint: string;
}

export type ReadKey = { readonly key: PublicKey } | { readonly problem: string };

const HINT = 'the line of your id_ed25519.pub, which starts with ssh-ed25519';
const PROBLEMS = {
  empty: `Paste your public key: ${HINT}`,
  private:
    'This is a private key, which must stay on your computer: paste the public key instead (the .pub file, such as id_ed25519.pub)',
  certificate:
    'Certificates are not accepted: paste the plain public key (id_ed25519.pub, not id_ed25519-cert.pub)',
  dsa: 'DSA keys are no longer safe and are not accepted: make an Ed25519 key with ssh-keygen -t ed25519',
  securityKey:
    'Security-key (FIDO) keys are not accepted: use an Ed25519, ECDSA or RSA key (ssh-keygen -t ed25519)',
  several: 'Paste one key at a time',
  options:
    'Options of an authorized_keys line (such as from="…") are not accepted: paste the key alone, starting with its type',
  damaged:
    'This key is cut short or damaged: copy the whole line of your .pub file again, from its type to its end',
  garbage: `This is not an SSH public key: paste ${HINT}`,
} as const;

/** The first word of a key line: its type (ssh-ed25519, ecdsa-…, sk-…, …@openssh.com). */
const TYPE_LIKE = /^(?:ssh-|ecdsa-|sk-|rsa-|x509v3-)|@openssh\.com$/;
const RFC4716 =
  /^---- BEGIN SSH2 PUBLIC KEY ----\r?\n([\s\S]*?)\r?\n---- END SSH2 PUBLIC KEY ----$/;

export function readPublicKey(text: string): ReadKey {
  const pasted = text.trim();
  if (pasted === '') return { problem: PROBLEMS.empty };
  if (/PRIVATE KEY-----|^PuTTY-User-Key-File-/m.test(pasted)) return { problem: PROBLEMS.private };
  const line = oneLine(pasted);
  if (typeof line !== 'string') return line;

  const [type = '', ...rest] = line.split(/\s+/);
  if (!TYPE_LIKE.test(type)) {
    return {
      problem: rest.some((word) => TYPE_LIKE.test(word)) ? PROBLEMS.options : PROBLEMS.garbage,
    };
  }
  const refused = refusedType(type);
  if (refused !== null) return { problem: refused };

  let parsed: ReturnType<typeof ssh2.utils.parseKey>;
  try {
    parsed = ssh2.utils.parseKey(line);
  } catch {
    return { problem: PROBLEMS.damaged };
  }
  if (parsed instanceof Error) {
    return {
      problem: /encrypted|private/i.test(parsed.message) ? PROBLEMS.private : PROBLEMS.damaged,
    };
  }
  if (parsed.isPrivateKey()) return { problem: PROBLEMS.private };
  const algorithm = parsed.type;
  if (!isSshKeyAlgorithm(algorithm)) return { problem: refusedType(algorithm) ?? PROBLEMS.damaged };
  const blob = parsed.getPublicSSH();
  if (algorithm === 'ssh-rsa') {
    const bits = rsaBits(blob);
    if (bits === null) return { problem: PROBLEMS.damaged };
    if (bits < MIN_RSA_BITS) {
      return {
        problem: `This RSA key has ${bits} bits, too few to be safe: RSA keys need at least ${MIN_RSA_BITS} (better, make an Ed25519 key with ssh-keygen -t ed25519)`,
      };
    }
    if (bits > MAX_RSA_BITS) {
      return { problem: `This RSA key has ${bits} bits: at most ${MAX_RSA_BITS} are accepted` };
    }
  }
  return {
    key: {
      algorithm,
      blob,
      line: `${algorithm} ${blob.toString('base64')}`,
      fingerprint: fingerprintOf(blob),
    },
  };
}

/** `SHA256:` and the unpadded base64 of the blob's SHA-256, as `ssh-keygen -l` prints it. */
export function fingerprintOf(blob: Buffer): string {
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

/**
 * The key as one line: an RFC 4716 block turned into OpenSSH's form, a line broken by a copy
 * joined again; several keys are a problem.
 */
function oneLine(pasted: string): string | { problem: string } {
  const block = RFC4716.exec(pasted);
  if (block) {
    const body = block[1] ?? '';
    // Header lines are `Tag: value`, continued by a trailing backslash; the rest is base64.
    const base64: string[] = [];
    let continued = false;
    for (const raw of body.split(/\r?\n/)) {
      const line = raw.trim();
      const header: boolean = continued || line.includes(':');
      continued = header && line.endsWith('\\');
      if (!header) base64.push(line);
    }
    const blob = Buffer.from(base64.join(''), 'base64');
    const type = sshStrings(blob)?.[0]?.toString('latin1');
    return type === undefined
      ? { problem: PROBLEMS.damaged }
      : `${type} ${blob.toString('base64')}`;
  }
  const lines = pasted
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
  if (lines.length === 1) return pasted;
  if (lines.filter((line) => TYPE_LIKE.test(line.split(/\s+/, 1)[0] ?? '')).length > 1) {
    return { problem: PROBLEMS.several };
  }
  // A terminal's copy may break a long line; base64 has no whitespace, so the pieces join.
  return lines.join('');
}

/** Why a key of this type is refused, or null for an accepted type. */
function refusedType(type: string): string | null {
  if (isSshKeyAlgorithm(type)) return null;
  if (type.includes('-cert-')) return PROBLEMS.certificate;
  if (type === 'ssh-dss') return PROBLEMS.dsa;
  if (type.startsWith('sk-')) return PROBLEMS.securityKey;
  return `Keys of type ${type.slice(0, 64)} are not accepted: use Ed25519, ECDSA, or RSA of ${MIN_RSA_BITS} bits or more`;
}

/** The modulus length of an `ssh-rsa` blob (string type, mpint e, mpint n); null if malformed. */
function rsaBits(blob: Buffer): number | null {
  const n = sshStrings(blob)?.[2];
  if (n === undefined) return null;
  let start = 0;
  while (start < n.length && n[start] === 0) start += 1;
  const top = n[start];
  if (top === undefined) return null;
  return (n.length - start - 1) * 8 + (32 - Math.clz32(top));
}

/** The length-prefixed strings of an SSH wire blob (RFC 4251 §5); null when one is cut short. */
function sshStrings(blob: Buffer): Buffer[] | null {
  const strings: Buffer[] = [];
  let at = 0;
  while (at < blob.length) {
    if (at + 4 > blob.length) return null;
    const length = blob.readUInt32BE(at);
    at += 4;
    if (at + length > blob.length) return null;
    strings.push(blob.subarray(at, at + length));
    at += length;
  }
  return strings;
}
