import { Type } from 'typebox';
import { Envelope } from '../../http/schemas.js';

/** Paths are checked by `userPath`, which gives the precise 400 or 403; the schema only bounds them. */
const UserPath = Type.String({
  maxLength: 16_384,
  description: 'Relative to the server directory; "", "/" and "." are its root',
});

export const PathQuery = Type.Object(
  { path: Type.Optional(UserPath) },
  { additionalProperties: false },
);
export const RequiredPathQuery = Type.Object({ path: UserPath }, { additionalProperties: false });

export const EntrySchema = Type.Object({
  name: Type.String(),
  path: Type.String({ description: 'Relative to the server directory' }),
  type: Type.Union([Type.Literal('file'), Type.Literal('folder'), Type.Literal('symlink')]),
  size: Type.Integer({ minimum: 0, description: "Bytes; 0 for folders; a symlink's own size" }),
  modified: Type.String({ format: 'date-time' }),
});

export const EntryEnvelope = Envelope(EntrySchema);
export const EntryListEnvelope = Envelope(Type.Array(EntrySchema));
export const ContentEnvelope = Envelope(
  Type.Object({ path: Type.String(), content: Type.String() }),
);
export const DeletedEnvelope = Envelope(Type.Object({ path: Type.String() }));

export const CreateBody = Type.Object(
  {
    type: Type.Union([Type.Literal('file'), Type.Literal('folder')]),
    name: Type.String({ minLength: 1, maxLength: 1024, description: 'One path segment' }),
    path: Type.Optional(UserPath),
  },
  { additionalProperties: false },
);

export const ContentBody = Type.Object(
  { content: Type.String({ description: 'UTF-8 text, at most MAX_EDIT_BYTES' }) },
  { additionalProperties: false },
);

export const RenameQuery = Type.Object(
  {
    old_path: UserPath,
    new_name: Type.String({ minLength: 1, maxLength: 1024, description: 'One path segment' }),
  },
  { additionalProperties: false },
);

export const MoveBody = Type.Object(
  {
    source: UserPath,
    destination: Type.String({
      maxLength: 16_384,
      description: 'An existing folder to move into, or the new path (its folder must exist)',
    }),
  },
  { additionalProperties: false },
);

export const DownloadLinkBody = Type.Object({ path: UserPath }, { additionalProperties: false });

export const DownloadLinkEnvelope = Envelope(
  Type.Object({
    url: Type.String({ description: 'Where to GET the file, without a token; one use' }),
    expiresAt: Type.String({ format: 'date-time' }),
  }),
);

export const DownloadIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 128 }) });

const PathList = Type.Array(UserPath, { minItems: 1, maxItems: 1000 });

export const DeleteManyBody = Type.Object({ paths: PathList }, { additionalProperties: false });
export const DeletedManyEnvelope = Envelope(
  Type.Object({ paths: Type.Array(Type.String(), { description: 'What was deleted, in order' }) }),
);

export const MoveManyBody = Type.Object(
  {
    paths: PathList,
    destination: Type.String({ maxLength: 16_384, description: 'An existing folder to move into' }),
  },
  { additionalProperties: false },
);

export const CompressBody = Type.Object(
  {
    paths: PathList,
    destination: Type.String({
      maxLength: 16_384,
      description: 'The new archive; its folder must exist, and nothing may be there yet',
    }),
    format: Type.Union([Type.Literal('zip'), Type.Literal('tar.gz')]),
  },
  { additionalProperties: false },
);

export const DecompressBody = Type.Object(
  {
    path: UserPath,
    destination: Type.String({
      maxLength: 16_384,
      description: 'An existing folder to unpack into',
    }),
  },
  { additionalProperties: false },
);
