import { Type, type TSchema } from 'typebox';
import { NODE_NAME_PATTERN } from '../../domain/node.js';
import { Envelope, Nullable } from '../../http/schemas.js';

/** `schema` or null, described. */
const orNull = <T extends TSchema>(schema: T, description: string) =>
  Type.Union([schema, Type.Null()], { description });

const name = Type.String({
  pattern: NODE_NAME_PATTERN,
  description:
    'Lower-case letters, digits and dashes, at most 32; `local` is the panel’s own machine',
});
const dockerHost = Type.String({
  minLength: 1,
  maxLength: 300,
  description:
    '`tcp://host:port` of an engine run with `--tlsverify` (with `tls`), or `ssh://user@host[:port]` (with `sshKey`)',
});
const pem = (what: string) => Type.String({ minLength: 1, maxLength: 20_000, description: what });
const tls = Type.Object(
  {
    ca: pem('The CA that signed the engine’s certificate (PEM)'),
    cert: pem('The client certificate the panel presents (PEM)'),
    key: pem('Its private key (PEM)'),
  },
  {
    additionalProperties: false,
    description: 'Stored sealed and never shown again',
  },
);
const sshKey = pem(
  'The private key the panel signs in with (OpenSSH or PEM); stored sealed and never shown again',
);
const sshHostKey = Type.String({
  minLength: 1,
  maxLength: 2_000,
  description:
    'The node’s SSH host key as known_hosts holds it (`ssh-ed25519 AAAA…`); by default the one it shows when added. A node showing another one is refused',
});
const bytes = (what: string) =>
  orNull(
    Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
    `${what}; null: not counted`,
  );
const percent = (what: string) =>
  Type.Integer({
    minimum: 0,
    maximum: 1000,
    description: `How far past ${what} the servers' limits may add up, in percent; 0 by default`,
  });
const settings = {
  publicAddress: Type.String({
    minLength: 1,
    maxLength: 253,
    pattern: '^[A-Za-z0-9.:\\[\\]-]+$',
    description: 'The host name or address players connect to (allocations are on it)',
  }),
  memoryBytes: bytes('Memory the node offers its servers'),
  diskBytes: bytes('Disk the node offers its servers'),
  memoryOverallocatePercent: percent('memoryBytes'),
  diskOverallocatePercent: percent('diskBytes'),
  maintenance: Type.Boolean({
    description: 'No new server is placed on it and none of its servers starts',
  }),
};

export const NodeParams = Type.Object({ name: Type.String({ minLength: 1, maxLength: 64 }) });

export const NewNodeBody = Type.Object(
  {
    name,
    dockerHost,
    tls: Type.Optional(tls),
    sshKey: Type.Optional(sshKey),
    sshHostKey: Type.Optional(sshHostKey),
    publicAddress: settings.publicAddress,
    memoryBytes: Type.Optional(settings.memoryBytes),
    diskBytes: Type.Optional(settings.diskBytes),
    memoryOverallocatePercent: Type.Optional(settings.memoryOverallocatePercent),
    diskOverallocatePercent: Type.Optional(settings.diskOverallocatePercent),
    maintenance: Type.Optional(settings.maintenance),
  },
  { additionalProperties: false },
);

export const NodeChangesBody = Type.Object(
  {
    dockerHost: Type.Optional(dockerHost),
    tls: Type.Optional(tls),
    sshKey: Type.Optional(sshKey),
    sshHostKey: Type.Optional(sshHostKey),
    publicAddress: Type.Optional(
      orNull(
        settings.publicAddress,
        'null only on `local`: players are told their allocation’s address',
      ),
    ),
    memoryBytes: Type.Optional(settings.memoryBytes),
    diskBytes: Type.Optional(settings.diskBytes),
    memoryOverallocatePercent: Type.Optional(settings.memoryOverallocatePercent),
    diskOverallocatePercent: Type.Optional(settings.diskOverallocatePercent),
    maintenance: Type.Optional(settings.maintenance),
  },
  {
    additionalProperties: false,
    description: 'How the node is reached changes only with its certificates or key sent again',
  },
);

const EngineSchema = Type.Object({
  version: Nullable(Type.String()),
  apiVersion: Nullable(Type.String()),
  os: Type.String(),
  arch: Type.String(),
  cpus: Type.Integer(),
  memoryBytes: Type.Integer(),
});

const HealthSchema = Type.Union(
  [
    Type.Object({
      status: Type.Literal('online'),
      checkedAt: Type.String({ format: 'date-time' }),
      engine: EngineSchema,
    }),
    Type.Object({
      status: Type.Literal('unreachable'),
      checkedAt: Type.String({ format: 'date-time' }),
      reason: Type.String(),
    }),
    Type.Object({ status: Type.Literal('unknown'), checkedAt: Type.Null() }),
  ],
  { description: 'How the node answered when last asked (every 15 s, and at each change)' },
);

export const NodeSchema = Type.Object({
  name: Type.String(),
  dockerHost: orNull(Type.String(), 'null for `local`'),
  connection: Type.Union([Type.Literal('local'), Type.Literal('tls'), Type.Literal('ssh')]),
  publicAddress: Nullable(Type.String()),
  memoryBytes: Nullable(Type.Integer()),
  diskBytes: Nullable(Type.Integer()),
  memoryOverallocatePercent: Type.Integer(),
  diskOverallocatePercent: Type.Integer(),
  maintenance: Type.Boolean(),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
  health: HealthSchema,
  servers: Type.Array(Type.String(), { description: 'The servers on the node, by name' }),
  allocated: Type.Object({
    memoryBytes: Type.Integer({ description: 'The memory limits of its servers added up' }),
    diskBytes: Type.Integer({ description: 'The disk limits of its servers added up' }),
    memoryCapacityBytes: orNull(
      Type.Integer(),
      'memoryBytes with its overallocation: the most they may add up to',
    ),
    diskCapacityBytes: Nullable(Type.Integer()),
  }),
});

export const NodeEnvelope = Envelope(NodeSchema);
export const NodeListEnvelope = Envelope(Type.Array(NodeSchema));
export const DeletedNodeEnvelope = Envelope(Type.Null());
