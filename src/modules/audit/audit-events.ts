/**
 * What the audit log records of the panel's own events: servers crashing or running out of
 * memory (their starts and stops are recorded as the requests that made them), backups and
 * restores ending, and transfers between nodes ending (their start and cancel are requests).
 */
import type { PanelEvents } from '../../events.js';
import type { AuditService } from './audit.service.js';

export function recordPanelEvents(events: PanelEvents, audit: AuditService): void {
  events.on('server-event', (server, kind, exit) => {
    if (kind !== 'crashed' && kind !== 'out-of-memory') return;
    void audit.recordUnattended({
      via: 'system',
      action: `server.${kind}`,
      server,
      target: null,
      outcome: 'failed',
      details: exit === undefined ? {} : { exitCode: exit.code, signal: exit.signal },
    });
  });
  events.on('backup-progress', (server, progress) => {
    if (progress.status === 'running') return;
    void audit.recordUnattended({
      via: 'system',
      action: `${progress.action}.${progress.status}`,
      server,
      target: progress.backup,
      outcome: progress.status === 'done' ? 'ok' : 'failed',
      details: progress.message === null ? {} : { message: progress.message },
    });
  });
  events.on('transfer-progress', (server, progress) => {
    if (progress.status === 'running') return;
    void audit.recordUnattended({
      via: 'system',
      action: `transfer.${progress.status}`,
      server,
      target: progress.transfer,
      outcome: progress.status === 'done' ? 'ok' : 'failed',
      details: {
        from: progress.from,
        to: progress.to,
        ...(progress.message === null ? {} : { message: progress.message }),
      },
    });
  });
}
