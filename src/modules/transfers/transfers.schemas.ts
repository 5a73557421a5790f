import { Type } from 'typebox';
import { NODE_NAME_PATTERN } from '../../domain/node.js';
import { TRANSFER_PHASES, TRANSFER_STATUSES } from '../../domain/transfer.js';
import { Envelope, Nullable } from '../../http/schemas.js';

export const TransferParams = Type.Object({
  server: Type.String({ minLength: 1, maxLength: 256 }),
});

export const TransferBody = Type.Object(
  {
    node: Type.String({
      pattern: NODE_NAME_PATTERN,
      maxLength: 32,
      description: 'The node to move the server to',
    }),
  },
  { additionalProperties: false },
);

const Phase = Type.Union(
  TRANSFER_PHASES.map((phase) => Type.Literal(phase)),
  {
    description:
      'stopping: the stop sequence of a server that ran; packing: its folder on the old node, into the panel; unpacking: into the new node; checking: the copy there counted against what was packed; switched: the server is on the new node',
  },
);

const Count = (description: string) =>
  Nullable(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description }));

export const TransferSchema = Type.Object({
  id: Type.String({ description: "The transfer's id (a UUID)" }),
  server: Type.String(),
  from: Type.String({ description: 'The node the server was on' }),
  to: Type.String({ description: 'The node it goes to' }),
  status: Type.Union(
    TRANSFER_STATUSES.map((status) => Type.Literal(status)),
    {
      description:
        'running until done (switched), failed or cancelled (the server stays on its old node, whole)',
    },
  ),
  phase: Phase,
  message: Nullable(Type.String({ description: 'Why it failed or was cancelled, or what it did' })),
  files: Count('Files and symlinks packed, once packing ended'),
  bytes: Count('Bytes of the files and symlink targets packed, once packing ended'),
  checksum: Nullable(Type.String({ description: 'SHA-256 of the archive streamed, hex' })),
  startedAt: Type.String({ format: 'date-time' }),
  finishedAt: Nullable(Type.String({ format: 'date-time' })),
  progress: Nullable(
    Type.Object(
      {
        phase: Phase,
        bytes: Type.Integer({ minimum: 0, description: 'Bytes of the phase under way done' }),
        totalBytes: Count('Bytes the phase under way has in all, when known'),
        files: Type.Integer({ minimum: 0 }),
      },
      { description: 'How far it is, while it runs' },
    ),
  ),
});

export const TransferEnvelope = Envelope(TransferSchema);
/** The server's last transfer; null when it had none. */
export const MaybeTransferEnvelope = Envelope(Nullable(TransferSchema));
