import { SERVER_PERMISSIONS } from '../../domain/policy.js';
import { Type } from 'typebox';
import { NODE_NAME_PATTERN } from '../../domain/node.js';
import { INSTALL_STATES, SERVER_STATUSES } from '../../domain/server.js';
import { Envelope, Username } from '../../http/schemas.js';

export const ServerName = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^(?!\\.{1,2}$)[A-Za-z0-9_.-]+$',
  description: '1 to 64 of A-Z a-z 0-9 _ . -, not "." or ".."; immutable',
});

/** Any name in a path: one that cannot exist simply is not found. */
export const ServerParams = Type.Object({ server: Type.String({ minLength: 1, maxLength: 256 }) });

const StatusSchema = Type.Union(
  SERVER_STATUSES.map((status) => Type.Literal(status)),
  {
    description:
      'installing: the install script runs; starting: until the template says it has started; crashed: ended without anybody asking; unknown: its node does not answer, so whether it runs is not known',
  },
);
const InstallStateSchema = Type.Union(
  INSTALL_STATES.map((state) => Type.Literal(state)),
  {
    description:
      'A server cannot start until its install succeeded or an admin marked it installed',
  },
);

const AllocationSchema = Type.Object(
  {
    ip: Type.String({
      minLength: 2,
      maxLength: 45,
      description: 'An IPv4 or IPv6 address; 0.0.0.0 for all',
    }),
    port: Type.Integer({ minimum: 1, maximum: 65535, description: 'Within SERVER_PORT_RANGE' }),
  },
  { additionalProperties: false },
);
const AllocationsSchema = Type.Array(AllocationSchema, {
  maxItems: 64,
  description:
    "The first is the primary ({{server.build.default.port}}, SERVER_IP and SERVER_PORT); unique on the server's node, counting 0.0.0.0 as every address",
});
const VariablesBody = Type.Record(
  Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]{0,127}$' }),
  Type.String({ maxLength: 4096 }),
  { description: "Values of the template's variables, by environment name", maxProperties: 100 },
);
const ExitSchema = Type.Object({
  code: Type.Union([Type.Integer(), Type.Null()]),
  signal: Type.Union([Type.String(), Type.Null()]),
  outOfMemory: Type.Boolean({
    description: 'The kernel ended the server at its memory limit',
  }),
  cleanStop: Type.Boolean({
    description:
      'A stop ended it the way the stop asks: exit code 0, or the signal it sent (`^C`: SIGINT) as that signal or as code 128 + its number (130, 143)',
  }),
  at: Type.String({ format: 'date-time' }),
});

const NodeSchema = Type.String({
  description: 'The node the server is on (docs/nodes.md); `local`: the panel’s own machine',
});

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
  template: Type.Union([Type.String(), Type.Null()], {
    description: 'The template the server was made from',
  }),
  install: Type.Object({
    state: InstallStateSchema,
    exitCode: Type.Union([Type.Integer(), Type.Null()]),
    finishedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    reason: Type.Union([Type.String(), Type.Null()], {
      description:
        "Why the last install failed (`the script exited with code 2`); null when it did not. Its last lines are in the console, and in the start's 409 for those who may read it",
    }),
  }),
  allocations: Type.Array(Type.Object({ ip: Type.String(), port: Type.Integer() })),
  node: NodeSchema,
  createdAt: Type.String({ format: 'date-time' }),
});

export const CreateBody = Type.Object(
  {
    name: ServerName,
    displayName: Type.Optional(DisplayName),
    template: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'A template id: the start and stop commands and variables come from it',
      }),
    ),
    variables: Type.Optional(VariablesBody),
    allocations: Type.Optional(AllocationsSchema),
    startCommand: Type.Optional(StartCommand),
    stopCommand: Type.Optional(StopCommand),
    stopTimeoutSeconds: Type.Optional(StopTimeout),
    autoRestart: Type.Optional(Type.Boolean()),
    limits: Type.Optional(LimitsBody),
    runtime: Type.Optional(RuntimeSchema),
    image: Type.Optional(ImageSchema),
    node: Type.Optional(
      Type.String({
        pattern: NODE_NAME_PATTERN,
        maxLength: 32,
        description:
          'The node to put it on (admins; 400 when unknown, 409 NODE_MAINTENANCE, 409 NODE_FULL); by default the node with the most memory left that fits its memory limit',
      }),
    ),
    owner: Type.Optional(
      Type.String({
        ...Username,
        description:
          'The username of its owner, who holds every permission on it and whom no sub-user may remove or narrow; none by default',
      }),
    ),
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

const PermissionsSchema = Type.Array(
  Type.Union(SERVER_PERMISSIONS.map((permission) => Type.Literal(permission))),
  { description: 'What the caller may do on the server (admins: every permission)' },
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
/** The configuration, with what the caller may do on the server. */
export const ConfigForCallerEnvelope = Envelope(
  Type.Intersect([ConfigSchema, Type.Object({ permissions: PermissionsSchema })]),
);

export const ServerListEnvelope = Envelope(
  Type.Array(
    Type.Object({
      name: Type.String(),
      displayName: Type.String(),
      status: StatusSchema,
      autoRestart: Type.Boolean(),
      template: Type.Union([Type.String(), Type.Null()]),
      installState: InstallStateSchema,
      lastExit: Type.Union([ExitSchema, Type.Null()], {
        description: 'How the last process ended (kept across restarts of the panel)',
      }),
      node: NodeSchema,
      createdAt: Type.String({ format: 'date-time' }),
      permissions: PermissionsSchema,
    }),
  ),
);

export const VariablesEnvelope = Envelope(
  Type.Array(
    Type.Object({
      name: Type.String(),
      description: Type.String(),
      envVariable: Type.String(),
      value: Type.String(),
      defaultValue: Type.String(),
      rules: Type.Array(Type.String()),
      userViewable: Type.Boolean(),
      userEditable: Type.Boolean(),
      editable: Type.Boolean({ description: 'Whether the caller may change it' }),
    }),
  ),
);

export const VariablesUpdateBody = Type.Object(
  { variables: VariablesBody },
  { additionalProperties: false },
);

export const AllocationsBody = Type.Object(
  { allocations: AllocationsSchema },
  { additionalProperties: false },
);

export const InstallStateBody = Type.Object(
  {
    state: Type.Union([Type.Literal('installed'), Type.Literal('not-installed')], {
      description: 'installed: the server may start whatever its install did',
    }),
  },
  { additionalProperties: false },
);

export const StatusEnvelope = Envelope(Type.Object({ name: Type.String(), status: StatusSchema }));

export const DeletedEnvelope = Envelope(Type.Object({ name: Type.String() }));

export const StatsEnvelope = Envelope(
  Type.Object({
    status: StatusSchema,
    pid: Type.Union([Type.Integer(), Type.Null()]),
    lastExit: Type.Union([ExitSchema, Type.Null()], {
      description: 'How the last process ended (kept across restarts of the panel)',
    }),
    uptimeSeconds: Type.Integer({ minimum: 0 }),
    imageDigest: Type.Union([Type.String(), Type.Null()], {
      description:
        'The registry digest (`sha256:…`) of the image its container was last made from (docker runtime, kept across restarts); null before its first docker start, after its image changed, or for an image built on the host',
    }),
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

export const FreePortEnvelope = Envelope(
  Type.Object({
    ip: Type.String({ description: 'Every address: 0.0.0.0' }),
    port: Type.Integer({
      description: 'The lowest port of the range no server on the node has (on any node: null)',
    }),
    range: Type.Object(
      { min: Type.Integer(), max: Type.Integer() },
      { description: 'SERVER_PORT_RANGE' },
    ),
    node: Type.Union([Type.String(), Type.Null()], {
      description: 'The node it is free on; null: free on every node',
    }),
  }),
);

export const FreePortQuery = Type.Object(
  {
    node: Type.Optional(
      Type.String({
        pattern: NODE_NAME_PATTERN,
        maxLength: 32,
        description:
          'The node the new server goes on: a port free there (400 when unknown); by default one free on every node',
      }),
    ),
  },
  { additionalProperties: false },
);

export const RewritesQuery = Type.Object(
  {
    path: Type.Optional(
      Type.String({
        maxLength: 16_384,
        description: 'A file of the server (as the files routes name it); every file when absent',
      }),
    ),
  },
  { additionalProperties: false },
);

export const RewritesEnvelope = Envelope(
  Type.Array(
    Type.Object({
      file: Type.String({ description: "The rule's file, relative to the server's folder" }),
      parser: Type.String(),
      keys: Type.Array(
        Type.Object({
          match: Type.String({ description: 'The key, as the parser reads it' }),
          ifValue: Type.Union([Type.String(), Type.Null()], {
            description: 'Only a current value equal to this is replaced; null: always',
          }),
          value: Type.String({
            description:
              "What is written, placeholders as in the template; a hidden variable's as [hidden]",
          }),
          from: Type.Array(
            Type.Object({
              envVariable: Type.Union([Type.String(), Type.Null()], {
                description: 'Null for a hidden variable or a panel setting',
              }),
              name: Type.String(),
              hidden: Type.Boolean({ description: 'A variable the caller may not see' }),
            }),
          ),
        }),
      ),
    }),
  ),
);
