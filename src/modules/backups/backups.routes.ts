import { currentUser } from '../../http/access.js';
import { responses } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import { DOWNLOADS, sendFile } from '../files/files.routes.js';
import {
  BackupDeletedEnvelope,
  BackupEnvelope,
  BackupLinkEnvelope,
  BackupListEnvelope,
  BackupListParams,
  BackupParams,
  BackupSettingsEnvelope,
  CreateBackupBody,
  LockBody,
  UpdateBackupSettingsBody,
} from './backups.schemas.js';
import type { BackupsService } from './backups.service.js';

const TAGS = ['backups'];

/** A server's backups: for whoever may use the server (docs/backups.md). */
export function backupsRoutes(app: App, backups: BackupsService): void {
  app.get(
    '/api/servers/:server/backups',
    {
      // Polled by the web UI: its request lines are logged at debug (src/http/logging.ts).
      config: { polled: true },
      schema: {
        tags: TAGS,
        summary: "The server's backups, newest first",
        params: BackupListParams,
        response: responses(BackupListEnvelope, 401, 403, 404),
      },
    },
    async (request) => ({
      message: 'Backups',
      data: await backups.list(currentUser(request), request.params.server),
    }),
  );

  app.post(
    '/api/servers/:server/backups',
    {
      schema: {
        tags: TAGS,
        summary: 'Start a backup of the server folder (.tar.gz); answers once it has begun',
        description:
          'The backup goes on in the background: `status` is `running` until `done` or `failed`, with `progress` meanwhile (and `backup` frames on the console socket). 409 `BACKUP_IN_PROGRESS` while a backup or restore of the server is under way, 409 `BACKUP_LIMIT` when the server has as many backups, or bytes of them, as an admin allowed.',
        params: BackupListParams,
        body: CreateBackupBody,
        response: responses(BackupEnvelope, 400, 401, 403, 404, 409),
      },
    },
    async (request) => ({
      message: 'Backup started',
      data: await backups.create(currentUser(request), request.params.server, request.body),
    }),
  );

  app.get(
    '/api/servers/:server/backup-settings',
    {
      schema: {
        tags: TAGS,
        summary: "The server's retention, limits and save commands",
        params: BackupListParams,
        response: responses(BackupSettingsEnvelope, 401, 403, 404),
      },
    },
    async (request) => ({
      message: 'Backup settings',
      data: await backups.settings(currentUser(request), request.params.server),
    }),
  );

  app.put(
    '/api/servers/:server/backup-settings',
    {
      schema: {
        tags: TAGS,
        summary: 'Change the settings sent; `maxCount` and `maxBytes` only by an admin (403)',
        params: BackupListParams,
        body: UpdateBackupSettingsBody,
        response: responses(BackupSettingsEnvelope, 400, 401, 403, 404),
      },
    },
    async (request) => ({
      message: 'Backup settings saved',
      data: await backups.saveSettings(currentUser(request), request.params.server, request.body),
    }),
  );

  app.get(
    '/api/servers/:server/backups/:id',
    {
      schema: {
        tags: TAGS,
        summary: 'A backup, with its progress while it is made or restored',
        params: BackupParams,
        response: responses(BackupEnvelope, 400, 401, 403, 404),
      },
    },
    async (request) => ({
      message: 'Backup',
      data: await backups.get(currentUser(request), request.params.server, request.params.id),
    }),
  );

  app.get(
    '/api/servers/:server/backups/:id/download',
    {
      schema: {
        tags: TAGS,
        summary: "Download the backup's .tar.gz (streamed; supports Range)",
        description: '409 while it is not finished.',
        params: BackupParams,
      },
    },
    async (request, reply) =>
      sendFile(
        request,
        reply,
        await backups.open(currentUser(request), request.params.server, request.params.id),
      ),
  );

  app.post(
    '/api/servers/:server/backups/:id/download-link',
    {
      schema: {
        tags: TAGS,
        summary: 'A link to download the backup without a token: valid 60 s, for one use',
        params: BackupParams,
        response: responses(BackupLinkEnvelope, 400, 401, 403, 404, 409),
      },
    },
    async (request) => {
      const link = await backups.createDownloadLink(
        currentUser(request),
        request.params.server,
        request.params.id,
      );
      return {
        message: 'Download link',
        data: { url: `${DOWNLOADS}/${link.id}`, expiresAt: link.expiresAt.toISOString() },
      };
    },
  );

  app.post(
    '/api/servers/:server/backups/:id/restore',
    {
      schema: {
        tags: TAGS,
        summary: "Replace the server's files by the backup's; answers once it has begun",
        description:
          'The server must be stopped (409) and cannot start until the restore ends (409 `BACKUP_IN_PROGRESS`). The archive is checked against its checksum, unpacked beside the server folder with every check of an extraction, and swapped in; a failed restore leaves the files as they were. The outcome is in `lastRestore`.',
        params: BackupParams,
        response: responses(BackupEnvelope, 400, 401, 403, 404, 409),
      },
    },
    async (request) => ({
      message: 'Restore started',
      data: await backups.restore(currentUser(request), request.params.server, request.params.id),
    }),
  );

  app.put(
    '/api/servers/:server/backups/:id/lock',
    {
      schema: {
        tags: TAGS,
        summary: 'Lock or unlock a backup: a locked one survives retention and cannot be deleted',
        params: BackupParams,
        body: LockBody,
        response: responses(BackupEnvelope, 400, 401, 403, 404),
      },
    },
    async (request) => ({
      message: request.body.locked ? 'Backup locked' : 'Backup unlocked',
      data: await backups.setLocked(
        currentUser(request),
        request.params.server,
        request.params.id,
        request.body.locked,
      ),
    }),
  );

  app.delete(
    '/api/servers/:server/backups/:id',
    {
      schema: {
        tags: TAGS,
        summary: 'Delete a backup and its file',
        description:
          '409 `BACKUP_LOCKED` while locked, `BACKUP_IN_PROGRESS` while it is made or restored.',
        params: BackupParams,
        response: responses(BackupDeletedEnvelope, 400, 401, 403, 404, 409),
      },
    },
    async (request) => {
      await backups.remove(currentUser(request), request.params.server, request.params.id);
      return { message: 'Backup deleted', data: { id: request.params.id } };
    },
  );
}
