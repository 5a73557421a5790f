import { Type } from 'typebox';
import { SSH_KEY_ALGORITHMS } from '../../domain/ssh-key.js';
import { Envelope, IdentityProofFields, Nullable } from '../../http/schemas.js';

const Timestamp = Type.String({ format: 'date-time' });

export const SshKeySchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  algorithm: Type.Union(SSH_KEY_ALGORITHMS.map((algorithm) => Type.Literal(algorithm))),
  publicKey: Type.String({
    description:
      "OpenSSH's one-line form without the comment (`ssh-ed25519 AAAA…`): public, shown again to compare with a .pub file",
  }),
  fingerprint: Type.String({
    description: '`SHA256:…`, as `ssh-keygen -l` and SFTP clients print it',
  }),
  createdAt: Timestamp,
  lastUsedAt: Nullable(Timestamp),
});

export const SshKeyEnvelope = Envelope(SshKeySchema);
export const SshKeyListEnvelope = Envelope(Type.Array(SshKeySchema));

export const NewSshKeyBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    publicKey: Type.String({
      minLength: 1,
      // An RSA key of 16384 bits, OpenSSH's largest, is about 2,800 characters.
      maxLength: 16_384,
      description:
        'The line of a .pub file (`ssh-ed25519 AAAA… comment`; the comment is dropped), or an RFC 4716 block (PuTTYgen). Ed25519, ECDSA (P-256, P-384, P-521) or RSA of 2048 to 16384 bits',
    }),
    ...IdentityProofFields,
  },
  { additionalProperties: false },
);

export const SshKeyParams = Type.Object({
  id: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }),
});
