import { Type } from 'typebox';
import { Envelope } from '../../http/schemas.js';

export const ServerName = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^(?!\\.{1,2}$)[A-Za-z0-9_.-]+$',
  description: '1 to 64 of A-Z a-z 0-9 _ . -, not "." or ".."; immutable',
});

/** Any name in a path: one that cannot exist simply is not found. */
export const ServerParams = Type.Object({ server: Type.String({ minLength: 1, maxLength: 256 }) });

const StatusSchema = Type.Union(
  ['stopped', 'starting', 'running', 'stopping', 'crashed'].map((status) => Type.Literal(status)),
);

const DisplayName = Type.String({ minLength: 1, maxLength: 100 });
const StartCommand = Type.String({
  minLength: 1,
  maxLength: 4096,
  description: 'Program and arguments, split with shell-like quoting and run without a shell',
});
const StopCommand = Type.Union([Type.String({ minLength: 1, maxLength: 4096 }), Type.Null()], {
  description: 'A line written to the console to stop the server; null: go straight to SIGTERM',
});
const StopTimeout = Type.Integer({
  minimum: 0,
  maximum: 3600,
  description: 'Seconds to wait after the stop command before SIGTERM',
});

export const ConfigSchema = Type.Object({
  name: Type.String(),
  displayName: Type.String(),
  startCommand: Type.String(),
  stopCommand: Type.Union([Type.String(), Type.Null()]),
  stopTimeoutSeconds: Type.Integer(),
  autoRestart: Type.Boolean(),
  createdAt: Type.String({ format: 'date-time' }),
});

export const CreateBody = Type.Object(
  {
    name: ServerName,
    displayName: Type.Optional(DisplayName),
    startCommand: StartCommand,
    stopCommand: Type.Optional(StopCommand),
    stopTimeoutSeconds: Type.Optional(StopTimeout),
    autoRestart: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const UpdateBody = Type.Object(
  {
    displayName: Type.Optional(DisplayName),
    startCommand: Type.Optional(StartCommand),
    stopCommand: Type.Optional(StopCommand),
    stopTimeoutSeconds: Type.Optional(StopTimeout),
    autoRestart: Type.Optional(Type.Boolean()),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    description: 'Any subset; startCommand and stopCommand are for admins only',
  },
);

export const CommandBody = Type.Object(
  {
    command: Type.String({
      minLength: 1,
      maxLength: 4096,
      pattern: '^[^\\r\\n]*$',
      description: "One line, written to the server's standard input with a newline",
    }),
  },
  { additionalProperties: false },
);

export const ConfigEnvelope = Envelope(ConfigSchema);

export const ServerListEnvelope = Envelope(
  Type.Array(
    Type.Object({
      name: Type.String(),
      displayName: Type.String(),
      status: StatusSchema,
      autoRestart: Type.Boolean(),
      createdAt: Type.String({ format: 'date-time' }),
    }),
  ),
);

export const StatusEnvelope = Envelope(Type.Object({ name: Type.String(), status: StatusSchema }));

export const DeletedEnvelope = Envelope(Type.Object({ name: Type.String() }));

export const StatsEnvelope = Envelope(
  Type.Object({
    status: StatusSchema,
    pid: Type.Union([Type.Integer(), Type.Null()]),
    lastExit: Type.Union(
      [
        Type.Object({
          code: Type.Union([Type.Integer(), Type.Null()]),
          signal: Type.Union([Type.String(), Type.Null()]),
          at: Type.String({ format: 'date-time' }),
        }),
        Type.Null(),
      ],
      { description: 'How the last process ended, since the panel started' },
    ),
    uptimeSeconds: Type.Integer({ minimum: 0 }),
    cpu: Type.Object({
      percent: Type.Number({ minimum: 0, description: 'Whole process tree; 100 = one core' }),
    }),
    memory: Type.Object({
      bytes: Type.Integer({ minimum: 0, description: 'Resident, whole tree' }),
    }),
    disk: Type.Object({
      bytes: Type.Integer({
        minimum: 0,
        description: 'Size of the server directory (cached 10 s)',
      }),
    }),
  }),
);
