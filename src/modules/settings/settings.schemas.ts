import { Type } from 'typebox';
import { Envelope, Nullable } from '../../http/schemas.js';

const MIB = 1024 * 1024;

const pids = Type.Integer({
  minimum: 1,
  maximum: 4_194_304,
  description: 'Processes and threads of a new server (always set: no server runs without one)',
});
const memoryBytes = Nullable(
  Type.Integer({ minimum: 8 * MIB, maximum: 2 ** 50, description: 'Memory of a new server' }),
);
const cpuPercent = Nullable(
  Type.Integer({
    minimum: 1,
    maximum: 100 * 1024,
    description: 'CPU of a new server; 100 = one core',
  }),
);
const diskBytes = Nullable(
  Type.Integer({
    minimum: 1,
    maximum: Number.MAX_SAFE_INTEGER,
    description: 'Disk quota of a new server',
  }),
);
const maxCount = Type.Integer({
  minimum: 1,
  maximum: 10_000,
  description: 'Backups a server may keep when its own backup settings set no count',
});
const maxBytes = Nullable(
  Type.Integer({
    minimum: 1,
    maximum: Number.MAX_SAFE_INTEGER,
    description:
      "Bytes a server's backups may hold when its own settings set none; null: the server's disk quota",
  }),
);

const ServerDefaults = Type.Object({ pids, memoryBytes, cpuPercent, diskBytes });
const BackupDefaults = Type.Object({ maxCount, maxBytes });

export const SettingsEnvelope = Envelope(
  Type.Object({
    serverDefaults: ServerDefaults,
    backupDefaults: BackupDefaults,
    registrationOpen: Type.Boolean({
      description:
        'Whether registration stays open once the first account exists (when REGISTRATION is unset)',
    }),
    registrationEnv: Nullable(
      Type.Union([Type.Literal('open'), Type.Literal('closed')], {
        description: 'REGISTRATION as set in the environment: when set, it decides alone',
      }),
    ),
  }),
);

export const SettingsBody = Type.Object(
  {
    serverDefaults: Type.Optional(
      Type.Object(
        {
          pids: Type.Optional(pids),
          memoryBytes: Type.Optional(memoryBytes),
          cpuPercent: Type.Optional(cpuPercent),
          diskBytes: Type.Optional(diskBytes),
        },
        { additionalProperties: false },
      ),
    ),
    backupDefaults: Type.Optional(
      Type.Object(
        { maxCount: Type.Optional(maxCount), maxBytes: Type.Optional(maxBytes) },
        { additionalProperties: false },
      ),
    ),
    registrationOpen: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
