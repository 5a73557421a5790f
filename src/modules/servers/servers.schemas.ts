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

const MIB = 1024 * 1024;
const limit = (options: { minimum: number; maximum: number; description: string }) =>
  Type.Union([Type.Integer(options), Type.Null()], {
    description: `${options.description}; null: none`,
  });

/** Resource limits (admins only). */
const LimitsShape = {
  memoryBytes: limit({
    minimum: 8 * MIB,
    maximum: 2 ** 50,
    description: 'Memory of the whole server, in bytes (at least 8 MiB); the kernel ends it above',
  }),
  cpuPercent: limit({
    minimum: 1,
    maximum: 100 * 1024,
    description: 'CPU time of the whole server; 100 = one core',
  }),
  pids: limit({
    minimum: 1,
    maximum: 4_194_304,
    description: 'Processes and threads of the whole server (a sandbox counts 2)',
  }),
  diskBytes: limit({
    minimum: 1,
    maximum: Number.MAX_SAFE_INTEGER,
    description: "Size of the server's folder, in bytes; writes past it are refused",
  }),
};
const LimitsSchema = Type.Object(LimitsShape);
const RuntimeSchema = Type.Union([Type.Literal('process'), Type.Literal('docker')], {
  description: 'process: a sandboxed local process; docker: a container of `image`',
});
/**
 * A Docker image reference as the engine reads it (distribution's grammar, without IPv6 hosts):
 * an optional registry host and port, lower-case path components joined by single slashes, an
 * optional tag and digest. So no `//`, `..` or upper case, which the engine would refuse or
 * answer with a redirect.
 */
const PATH_COMPONENT = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
const HOST_PART = '[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?';
const IMAGE_REFERENCE =
  `^(?:${HOST_PART}(?:\\.${HOST_PART})*(?::[0-9]+)?/)?` +
  `${PATH_COMPONENT}(?:/${PATH_COMPONENT})*` +
  '(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$';
const ImageSchema = Type.Union(
  [
    Type.String({
      minLength: 1,
      maxLength: 255,
      pattern: IMAGE_REFERENCE,
      description: 'A Docker image reference, e.g. registry.example:5000/games/minetest:5.6',
    }),
    Type.Null(),
  ],
  { description: 'The image of the docker runtime; required with it' },
);
const LimitsBody = Type.Object(
  {
    memoryBytes: Type.Optional(LimitsShape.memoryBytes),
    cpuPercent: Type.Optional(LimitsShape.cpuPercent),
    pids: Type.Optional(LimitsShape.pids),
    diskBytes: Type.Optional(LimitsShape.diskBytes),
  },
  { additionalProperties: false },
);

export const ConfigSchema = Type.Object({
  name: Type.String(),
  displayName: Type.String(),
  startCommand: Type.String(),
  stopCommand: Type.Union([Type.String(), Type.Null()]),
  stopTimeoutSeconds: Type.Integer(),
  autoRestart: Type.Boolean(),
  limits: LimitsSchema,
  runtime: RuntimeSchema,
  image: Type.Union([Type.String(), Type.Null()]),
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
    limits: Type.Optional(LimitsBody),
    runtime: Type.Optional(RuntimeSchema),
    image: Type.Optional(ImageSchema),
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
    limits: Type.Optional(LimitsBody),
    runtime: Type.Optional(RuntimeSchema),
    image: Type.Optional(ImageSchema),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    description:
      'Any subset; startCommand, stopCommand, limits, runtime and image are for admins only. A limit left out stays as it is',
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
          outOfMemory: Type.Boolean({
            description: 'The kernel ended the server at its memory limit',
          }),
          at: Type.String({ format: 'date-time' }),
        }),
        Type.Null(),
      ],
      { description: 'How the last process ended, since the panel started' },
    ),
    uptimeSeconds: Type.Integer({ minimum: 0 }),
    cpu: Type.Object({
      percent: Type.Number({ minimum: 0, description: 'Whole process tree; 100 = one core' }),
      limit: Type.Union([Type.Integer(), Type.Null()], { description: 'cpuPercent limit' }),
    }),
    memory: Type.Object({
      bytes: Type.Integer({ minimum: 0, description: 'Resident, whole tree' }),
      limit: Type.Union([Type.Integer(), Type.Null()], { description: 'memoryBytes limit' }),
    }),
    pids: Type.Object({
      count: Type.Integer({ minimum: 0, description: 'Processes (or threads) now' }),
      limit: Type.Union([Type.Integer(), Type.Null()]),
    }),
    disk: Type.Object({
      bytes: Type.Integer({
        minimum: 0,
        description: 'Size of the server directory (cached 10 s)',
      }),
      limit: Type.Union([Type.Integer(), Type.Null()], { description: 'diskBytes limit' }),
    }),
  }),
);
