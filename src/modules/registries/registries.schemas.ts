import { Type } from 'typebox';
import { Envelope, Nullable } from '../../http/schemas.js';

const host = Type.String({
  minLength: 1,
  maxLength: 255,
  description:
    'As images name it: ghcr.io, registry.example:5000, 127.0.0.1:5000; docker.io for Docker Hub (index.docker.io is the same). Kept lower-case',
});
const username = Type.String({
  minLength: 1,
  maxLength: 255,
  description: 'Who pulls sign in as; no colon or control character',
});
const password = Type.String({
  minLength: 1,
  maxLength: 4096,
  description: 'The password or access token; stored sealed and never shown again',
});

export const RegistryParams = Type.Object({ host });

export const RegistrySchema = Type.Object({
  host: Type.String(),
  username: Nullable(Type.String()),
  passwordSet: Type.Boolean({ description: 'A password is stored (never shown)' }),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});

export const RegistrySettingsSchema = Type.Object({
  restricted: Type.Boolean({
    description: 'Images may be pulled only from the listed registries; false: from any',
  }),
  registries: Type.Array(RegistrySchema),
});

export const NewRegistryBody = Type.Object(
  {
    host,
    username: Type.Optional(username),
    password: Type.Optional(password),
  },
  {
    additionalProperties: false,
    description: 'username and password together, or neither (pulled anonymously)',
  },
);

export const RegistryChangesBody = Type.Object(
  {
    username: Type.Optional(Nullable(username)),
    password: Type.Optional(Nullable(password)),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    description:
      'A new username, password or both (one alone keeps the other); null for either removes both',
  },
);

export const RegistryRuleBody = Type.Object(
  { restricted: Type.Boolean() },
  { additionalProperties: false },
);

export const RegistryEnvelope = Envelope(RegistrySchema);
export const RegistrySettingsEnvelope = Envelope(RegistrySettingsSchema);
export const DeletedEnvelope = Envelope(Type.Null());
