/** The SSH keys section's own logic, without React: a key's type in words, a pasted key's name. */

/** What people call each key type the API accepts. */
const ALGORITHM_NAMES: Readonly<Record<string, string>> = {
  'ssh-ed25519': 'Ed25519',
  'ecdsa-sha2-nistp256': 'ECDSA P-256',
  'ecdsa-sha2-nistp384': 'ECDSA P-384',
  'ecdsa-sha2-nistp521': 'ECDSA P-521',
  'ssh-rsa': 'RSA',
};

/** "Ed25519", "ECDSA P-256", "RSA"; an unknown type as it is. */
export const algorithmName = (algorithm: string): string => ALGORITHM_NAMES[algorithm] ?? algorithm;

/** The longest name the API takes. */
const MAX_NAME = 100;

/**
 * The comment of a pasted `.pub` line (`ssh-ed25519 AAAA… alice@laptop` → `alice@laptop`), to
 * name the key by when its name is still empty; '' when there is none, or for anything but one
 * line.
 */
export function commentOf(pasted: string): string {
  const lines = pasted.trim().split(/\r?\n/);
  if (lines.length !== 1) return '';
  const words = (lines[0] ?? '').split(/\s+/);
  return words.slice(2).join(' ').slice(0, MAX_NAME);
}
