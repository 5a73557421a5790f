import type { MultipartFile } from '@fastify/multipart';
import contentDisposition from 'content-disposition';
import parseRange from 'range-parser';
import { AppError } from '../../errors.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { OpenedFile } from '../../host/host.js';
import { currentUser } from '../../http/access.js';
import { responses } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { ServerParams } from '../servers/servers.schemas.js';
import {
  ContentBody,
  ContentEnvelope,
  CompressBody,
  CreateBody,
  DecompressBody,
  DeletedEnvelope,
  DeletedManyEnvelope,
  DeleteManyBody,
  DownloadIdParams,
  DownloadLinkBody,
  DownloadLinkEnvelope,
  EntryEnvelope,
  EntryListEnvelope,
  MoveBody,
  MoveManyBody,
  PathQuery,
  RenameQuery,
  RequiredPathQuery,
} from './files.schemas.js';
import type { FilesService, UploadPart } from './files.service.js';

const TAGS = ['files'];

/**
 * What the multipart parser may hold for a file before it stops reading the request: with
 * Node's 16 KiB default it pauses and resumes the socket for every read, and the network and
 * the disk take turns instead of working side by side.
 */
const PARSER_BUFFERS = { fileHwm: 1024 * 1024, highWaterMark: 1024 * 1024 };

/**
 * The multipart parser's own refusals (too many parts: 413) pass through; anything else it
 * throws (no boundary, a body that ends early) is a malformed upload, not a fault of the panel.
 */
function malformed(error: unknown): unknown {
  const { statusCode, code } = (error ?? {}) as { statusCode?: unknown; code?: unknown };
  if (error instanceof AppError || (typeof statusCode === 'number' && statusCode < 500)) {
    return error;
  }
  // A file-system failure carries an errno code (ENOSPC, EIO…): that one is the panel's.
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return error;
  return new AppError('INVALID_UPLOAD', 'The multipart body is malformed');
}

/**
 * RFC 6266 `attachment` with a plain-ASCII `filename` (quotes escaped, anything else `?`) and,
 * when the name is not plain ASCII, the exact name as UTF-8 in `filename*`.
 */
const attachment = (name: string): string =>
  contentDisposition(name, { fallback: name.replace(/[^\x20-\x7e]/g, '?') });

/** Where download links point; `redactUrl` keeps their ids out of the log. */
export const DOWNLOADS = '/api/downloads';

/**
 * Streams an opened file as an attachment, with one range when asked (206), and closes it.
 */
export async function sendFile(
  request: FastifyRequest,
  reply: FastifyReply,
  file: OpenedFile,
): Promise<FastifyReply> {
  let start = 0;
  let end = file.size - 1;
  let partial = false;
  const range = request.headers.range;
  if (range !== undefined) {
    const ranges = parseRange(file.size, range, { combine: true });
    if (ranges === -1) {
      await file.close();
      reply.header('Content-Range', `bytes */${file.size}`);
      throw new AppError('RANGE_NOT_SATISFIABLE', 'The requested range is outside the file');
    }
    // A malformed header (-2) or several ranges are answered with the whole file.
    if (Array.isArray(ranges) && ranges.length === 1 && ranges[0]) {
      ({ start, end } = ranges[0]);
      partial = true;
    }
  }
  reply
    .code(partial ? 206 : 200)
    .header('Content-Type', 'application/octet-stream')
    .header('Content-Disposition', attachment(file.name))
    .header('Accept-Ranges', 'bytes')
    .header('Last-Modified', file.modified.toUTCString())
    .header('Content-Length', String(Math.max(0, end - start + 1)));
  if (partial) reply.header('Content-Range', `bytes ${start}-${end}/${file.size}`);
  if (file.size === 0) {
    await file.close();
    return reply.send('');
  }
  // A client that goes away destroys the stream, which stops the reading (OpenedFile.read).
  return reply.send(file.read({ start, end }));
}

export function filesRoutes(app: App, files: FilesService, limits: { maxEditBytes: number }): void {
  app.get(
    '/api/servers/:server/files',
    {
      schema: {
        tags: TAGS,
        summary: 'List a folder: folders first, then by name',
        params: ServerParams,
        querystring: PathQuery,
        response: responses(EntryListEnvelope, 400, 401, 403, 404),
      },
    },
    async (request) => ({
      message: 'Folder listing',
      data: await files.list(currentUser(request), request.params.server, request.query.path ?? ''),
    }),
  );

  app.post(
    '/api/servers/:server/files/create',
    {
      schema: {
        tags: TAGS,
        summary: 'Create an empty file or a folder named `name` in the folder `path`',
        params: ServerParams,
        body: CreateBody,
        response: responses(EntryEnvelope, 400, 401, 403, 404, 409),
      },
    },
    async (request) => ({
      message: request.body.type === 'folder' ? 'Folder created' : 'File created',
      data: await files.create(currentUser(request), request.params.server, {
        type: request.body.type,
        name: request.body.name,
        path: request.body.path ?? '',
      }),
    }),
  );

  app.post(
    '/api/servers/:server/files/upload',
    {
      schema: {
        tags: TAGS,
        summary: 'Upload files (multipart field "file", several allowed) into the folder `path`',
        description:
          'Streamed to a temporary file and renamed into place when complete; an existing file of the same name is replaced only then. Over MAX_UPLOAD_BYTES: 413, nothing kept.',
        params: ServerParams,
        querystring: PathQuery,
        response: responses(EntryListEnvelope, 400, 401, 403, 404, 413, 415),
      },
    },
    async (request) => {
      if (!request.isMultipart()) {
        throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send the files as multipart/form-data');
      }
      const parts = (async function* (): AsyncGenerator<UploadPart> {
        let iterator: AsyncIterator<MultipartFile>;
        try {
          iterator = request.files(PARSER_BUFFERS)[Symbol.asyncIterator]();
        } catch (error) {
          throw malformed(error);
        }
        for (;;) {
          let next: IteratorResult<MultipartFile>;
          try {
            next = await iterator.next();
          } catch (error) {
            throw malformed(error);
          }
          if (next.done === true) return;
          const part = next.value;
          yield { fieldname: part.fieldname, filename: part.filename, file: part.file };
        }
      })();
      try {
        return {
          message: 'Uploaded',
          data: await files.upload(
            currentUser(request),
            request.params.server,
            request.query.path ?? '',
            parts,
          ),
        };
      } catch (error) {
        throw malformed(error);
      }
    },
  );

  app.get(
    '/api/servers/:server/files/download',
    {
      schema: {
        tags: TAGS,
        summary: 'Download a file (streamed; supports Range)',
        params: ServerParams,
        querystring: RequiredPathQuery,
      },
    },
    async (request, reply) =>
      sendFile(
        request,
        reply,
        await files.open(currentUser(request), request.params.server, request.query.path),
      ),
  );

  app.post(
    '/api/servers/:server/files/download-link',
    {
      schema: {
        tags: TAGS,
        summary: 'A link to download a file without a token: valid 60 s, for one use',
        description:
          'For browsers, which stream a download to disk only when they navigate to it, and cannot send a bearer token when they do. The link is bound to the caller, the server and the file; the rights are checked again when it is used.',
        params: ServerParams,
        body: DownloadLinkBody,
        response: responses(DownloadLinkEnvelope, 400, 401, 403, 404),
      },
    },
    async (request) => {
      const link = await files.createDownloadLink(
        currentUser(request),
        request.params.server,
        request.body.path,
      );
      return {
        message: 'Download link',
        data: { url: `${DOWNLOADS}/${link.id}`, expiresAt: link.expiresAt.toISOString() },
      };
    },
  );

  app.get(
    `${DOWNLOADS}/:id`,
    {
      // The link is the credential; its user's rights are checked again by the service.
      config: { access: 'public' },
      schema: {
        tags: TAGS,
        summary: 'Download through a link from download-link (streamed; supports Range)',
        description:
          'Unknown or already used: 404 `NOT_FOUND`; expired: 410 `LINK_EXPIRED`; the user lost access meanwhile: 403.',
        params: DownloadIdParams,
      },
    },
    async (request, reply) => sendFile(request, reply, await files.openByLink(request.params.id)),
  );

  app.get(
    '/api/servers/:server/files/content',
    {
      schema: {
        tags: TAGS,
        summary: 'Read a UTF-8 text file (at most MAX_EDIT_BYTES)',
        params: ServerParams,
        querystring: RequiredPathQuery,
        response: responses(ContentEnvelope, 400, 401, 403, 404, 413),
      },
    },
    async (request) => ({
      message: 'File content',
      data: await files.readContent(
        currentUser(request),
        request.params.server,
        request.query.path,
      ),
    }),
  );

  app.put(
    '/api/servers/:server/files/content',
    {
      // Room for JSON escaping; the content itself is held to MAX_EDIT_BYTES by the service.
      bodyLimit: limits.maxEditBytes * 2 + 64 * 1024,
      schema: {
        tags: TAGS,
        summary: 'Save a text file atomically, keeping its mode; creates it if its folder exists',
        params: ServerParams,
        querystring: RequiredPathQuery,
        body: ContentBody,
        response: responses(EntryEnvelope, 400, 401, 403, 404, 413),
      },
    },
    async (request) => ({
      message: 'Saved',
      data: await files.writeContent(
        currentUser(request),
        request.params.server,
        request.query.path,
        request.body.content,
      ),
    }),
  );

  app.put(
    '/api/servers/:server/files/rename',
    {
      schema: {
        tags: TAGS,
        summary: 'Rename a file or folder within its folder',
        params: ServerParams,
        querystring: RenameQuery,
        response: responses(EntryEnvelope, 400, 401, 403, 404, 409),
      },
    },
    async (request) => ({
      message: 'Renamed',
      data: await files.rename(
        currentUser(request),
        request.params.server,
        request.query.old_path,
        request.query.new_name,
      ),
    }),
  );

  app.post(
    '/api/servers/:server/files/move',
    {
      schema: {
        tags: TAGS,
        summary: 'Move a file or folder (into `destination` when it is a folder)',
        params: ServerParams,
        body: MoveBody,
        response: responses(EntryEnvelope, 400, 401, 403, 404, 409),
      },
    },
    async (request) => ({
      message: 'Moved',
      data: await files.move(
        currentUser(request),
        request.params.server,
        request.body.source,
        request.body.destination,
      ),
    }),
  );

  app.delete(
    '/api/servers/:server/files',
    {
      schema: {
        tags: TAGS,
        summary: 'Delete a file, a symlink (not its target) or a folder with its content',
        params: ServerParams,
        querystring: RequiredPathQuery,
        response: responses(DeletedEnvelope, 400, 401, 403, 404),
      },
    },
    async (request) => ({
      message: 'Deleted',
      data: {
        path: await files.delete(currentUser(request), request.params.server, request.query.path),
      },
    }),
  );

  app.post(
    '/api/servers/:server/files/move-many',
    {
      schema: {
        tags: TAGS,
        summary: 'Move several files or folders into the folder `destination`',
        description:
          'All paths are checked first (each exists, no two share a name, none lands on an existing entry, the destination is not inside one of them): else 400, 404 or 409 and nothing is moved. Then they are moved in order; a failure part-way (something changed meanwhile) says in its message what was moved before it, which stays moved.',
        params: ServerParams,
        body: MoveManyBody,
        response: responses(EntryListEnvelope, 400, 401, 403, 404, 409),
      },
    },
    async (request) => ({
      message: 'Moved',
      data: await files.moveMany(
        currentUser(request),
        request.params.server,
        request.body.paths,
        request.body.destination,
      ),
    }),
  );

  app.post(
    '/api/servers/:server/files/delete',
    {
      schema: {
        tags: TAGS,
        summary: 'Delete several files, symlinks (not their targets) or folders with their content',
        description:
          'All paths are checked first (each exists and is not the server directory): else 400 or 404 and nothing is deleted. Then they are deleted in order; a failure part-way says in its message what was deleted before it, which stays deleted.',
        params: ServerParams,
        body: DeleteManyBody,
        response: responses(DeletedManyEnvelope, 400, 401, 403, 404, 409),
      },
    },
    async (request) => ({
      message: 'Deleted',
      data: {
        paths: await files.deleteMany(
          currentUser(request),
          request.params.server,
          request.body.paths,
        ),
      },
    }),
  );

  app.post(
    '/api/servers/:server/files/compress',
    {
      schema: {
        tags: TAGS,
        summary: 'Pack files and folders into a new zip or tar.gz archive at `destination`',
        description:
          'Folders are packed with everything in them, each path under its own name; symlinks are stored as symlinks and never followed; FIFOs, sockets and devices are skipped. Streamed into a temporary file, counted against the disk quota (413 QUOTA_EXCEEDED) and put in place only when complete: 409 ALREADY_EXISTS if `destination` exists; nothing is left on failure.',
        params: ServerParams,
        body: CompressBody,
        response: responses(EntryEnvelope, 400, 401, 403, 404, 409, 413),
      },
    },
    async (request) => ({
      message: 'Compressed',
      data: await files.compress(currentUser(request), request.params.server, request.body),
    }),
  );

  app.post(
    '/api/servers/:server/files/decompress',
    {
      schema: {
        tags: TAGS,
        summary: 'Unpack a zip, tar or tar.gz archive into the folder `destination`',
        description:
          'The format is told by the content, not the name. Unpacked into a temporary folder first, then its entries are moved in (409 ALREADY_EXISTS, nothing moved, if a name is taken). Refused with 400 INVALID_ARCHIVE naming the entry: absolute paths, `..`, hard links, devices and FIFOs, symlinks leaving the server directory, entries written through a symlink, a compression ratio over 200:1; 413 past ARCHIVE_MAX_BYTES, ARCHIVE_MAX_ENTRIES or the disk quota. Nothing is left on failure.',
        params: ServerParams,
        body: DecompressBody,
        response: responses(EntryListEnvelope, 400, 401, 403, 404, 409, 413),
      },
    },
    async (request) => ({
      message: 'Extracted',
      data: await files.decompress(
        currentUser(request),
        request.params.server,
        request.body.path,
        request.body.destination,
      ),
    }),
  );
}
