/**
 * SSH public keys: what a user adds on their profile to sign in to SFTP (docs/sftp.md) without a
 * password. Only the public half is ever sent or stored; it is no secret, so it is listed again.
 */

/** The key types accepted: Ed25519, ECDSA on the three NIST curves, and RSA of 2048 bits or more. */
export const SSH_KEY_ALGORITHMS = [
  'ssh-ed25519',
  'ecdsa-sha2-nistp256',
  'ecdsa-sha2-nistp384',
  'ecdsa-sha2-nistp521',
  'ssh-rsa',
] as const;

export type SshKeyAlgorithm = (typeof SSH_KEY_ALGORITHMS)[number];

export const isSshKeyAlgorithm = (value: string): value is SshKeyAlgorithm =>
  (SSH_KEY_ALGORITHMS as readonly string[]).includes(value);

export interface SshKey {
  readonly id: number;
  readonly name: string;
  readonly algorithm: SshKeyAlgorithm;
  /** OpenSSH's one-line form without the comment: `ssh-ed25519 AAAA…`. */
  readonly publicKey: string;
  /** `SHA256:…`, as `ssh-keygen -l` and OpenSSH's clients print it. */
  readonly fingerprint: string;
  readonly createdAt: string;
  /** The last SFTP sign-in with it; null: never. */
  readonly lastUsedAt: string | null;
}
