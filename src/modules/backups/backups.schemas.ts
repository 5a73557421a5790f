import { Type } from 'typebox';
import {
  BACKUP_CONSISTENCIES,
  BACKUP_STATUSES,
  MAX_IGNORE_PATTERNS,
  MAX_SAVE_COMMANDS,
  MAX_WAIT_SECONDS,
} from '../../domain/backup.js';
import { Envelope, Nullable } from '../../http/schemas.js';

const Server = Type.String({ minLength: 1, maxLength: 256 });
const Id = Type.String({
  pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$',
  description: "The backup's id (a UUID)",
});

export const BackupListParams = Type.Object({ server: Server });
export const BackupParams = Type.Object({ server: Server, id: Id });

const OneLine = (description: string, maxLength = 4096) =>
  Type.String({ minLength: 1, maxLength, pattern: '^[^\\r\\n\\u0000]*$', description });

export const CreateBackupBody = Type.Object(
  {
    name: Type.Optional(
      Type.String({
        maxLength: 100,
        pattern: '^[^\\r\\n\\u0000]*$',
        description: '`Backup <date and time>` by default',
      }),
    ),
    ignore: Type.Optional(
      Type.Array(OneLine('A gitignore pattern, relative to the server folder', 256), {
        maxItems: MAX_IGNORE_PATTERNS,
        description:
          "Left out of the backup, in gitignore syntax; the lines of the server folder's `.backupignore` are added",
      }),
    ),
  },
  { additionalProperties: false },
);

export const LockBody = Type.Object(
  {
    locked: Type.Boolean({
      description: 'A locked backup is never deleted, by retention or anybody',
    }),
  },
  { additionalProperties: false },
);

const Count = (description: string) =>
  Type.Union([Type.Integer({ minimum: 1, maximum: 1_000_000 }), Type.Null()], { description });

const Commands = (description: string) =>
  Type.Array(OneLine('A console line'), { maxItems: MAX_SAVE_COMMANDS, description });

const settingsFields = {
  keepLast: Count('Keep the newest N unlocked finished backups, delete older ones; null: all'),
  keepDays: Count('Delete unlocked backups older than N days; null: never'),
  maxCount: Count('Admins only: at most N backups (409 BACKUP_LIMIT past it); null: no limit'),
  maxBytes: Type.Union(
    [Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }), Type.Null()],
    { description: 'Admins only: at most this many bytes of backups; null: no limit' },
  ),
  beforeCommands: Commands('Sent to a running server before packing (save-off, save-all)'),
  afterCommands: Commands('Sent after packing if it still runs (save-on)'),
  savedLine: Type.Union(
    [OneLine('Text a console line contains, or regex:<pattern>', 256), Type.Null()],
    { description: 'The line that says the save is done; null: pack right after the commands' },
  ),
  waitSeconds: Type.Integer({
    minimum: 1,
    maximum: MAX_WAIT_SECONDS,
    description: 'How long to wait for the saved line before packing anyway',
  }),
};

export const BackupSettingsSchema = Type.Object({
  ...settingsFields,
  commandsBy: Type.Union([Type.String(), Type.Null()], {
    description:
      'Who set the save commands: a backup types them in this name (`[panel] carol> save-off`), and only while this account holds `console.write` on the server. null: nobody, or a deleted account (they are not typed)',
  }),
});
export const UpdateBackupSettingsBody = Type.Partial(Type.Object(settingsFields), {
  additionalProperties: false,
});

export const BackupSchema = Type.Object({
  id: Type.String(),
  server: Type.String(),
  name: Type.String(),
  status: Type.Union(BACKUP_STATUSES.map((status) => Type.Literal(status))),
  locked: Type.Boolean(),
  ignore: Type.Array(Type.String()),
  bytes: Nullable(Type.Integer({ description: 'Bytes of the archive' })),
  checksum: Type.Union([Type.String({ description: 'SHA-256 of the archive, hex' }), Type.Null()]),
  files: Nullable(Type.Integer({ description: 'Files and symlinks packed' })),
  entries: Nullable(Type.Integer({ description: 'Entries packed, folders included' })),
  unpackedBytes: Nullable(Type.Integer({ description: 'Bytes of the files packed' })),
  durationMs: Nullable(Type.Integer()),
  consistency: Type.Union([
    ...BACKUP_CONSISTENCIES.map((consistency) => Type.Literal(consistency)),
    Type.Null(),
  ]),
  message: Type.Union([Type.String(), Type.Null()], {
    description: 'Why it failed, or what a consistent copy could not be sure of',
  }),
  lastRestore: Type.Union([
    Type.Object({
      status: Type.Union([Type.Literal('running'), Type.Literal('done'), Type.Literal('failed')]),
      message: Type.String(),
      at: Type.String({ format: 'date-time' }),
    }),
    Type.Null(),
  ]),
  progress: Type.Union(
    [
      Type.Object({
        backup: Type.String(),
        action: Type.Union([Type.Literal('backup'), Type.Literal('restore')]),
        bytes: Type.Integer(),
        totalBytes: Nullable(Type.Integer()),
        files: Type.Integer(),
      }),
      Type.Null(),
    ],
    { description: 'While the backup is being made or restored' },
  ),
  createdAt: Type.String({ format: 'date-time' }),
  finishedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

export const BackupEnvelope = Envelope(BackupSchema);
export const BackupListEnvelope = Envelope(Type.Array(BackupSchema));
export const BackupDeletedEnvelope = Envelope(Type.Object({ id: Type.String() }));
export const BackupSettingsEnvelope = Envelope(BackupSettingsSchema);
export const BackupLinkEnvelope = Envelope(
  Type.Object({
    url: Type.String({ description: 'Relative URL: GET it without a token, once, within 60 s' }),
    expiresAt: Type.String({ format: 'date-time' }),
  }),
);
