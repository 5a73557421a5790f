/**
 * Which events of the panel become which webhook events, and the `data` each carries: names,
 * ids and statuses, never secrets or contents (no message text, no file, no console line).
 */
import type { WebhookEvent } from '../../domain/webhook.js';
import type { PanelEvents, ServerEventKind, TicketEventKind } from '../../events.js';

export type Publish = (event: WebhookEvent, data: Readonly<Record<string, unknown>>) => void;

const SERVER_EVENTS: Readonly<Record<ServerEventKind, WebhookEvent>> = {
  started: 'server.started',
  stopped: 'server.stopped',
  crashed: 'server.crashed',
  'out-of-memory': 'server.out-of-memory',
};

const TICKET_EVENTS: Readonly<Record<TicketEventKind, WebhookEvent>> = {
  created: 'ticket.created',
  answered: 'ticket.answered',
  'status-changed': 'ticket.status-changed',
};

export function publishPanelEvents(events: PanelEvents, publish: Publish): void {
  events.on('server-event', (server, kind, exit) => {
    publish(SERVER_EVENTS[kind], {
      server,
      ...(exit === undefined ? {} : { exitCode: exit.code, signal: exit.signal }),
    });
  });
  events.on('backup-progress', (server, progress) => {
    // Restores are not backups; a backup still running says nothing yet.
    if (progress.action !== 'backup' || progress.status === 'running') return;
    publish(progress.status === 'done' ? 'backup.done' : 'backup.failed', {
      server,
      backup: progress.backup,
      files: progress.files,
      bytes: progress.bytes,
      ...(progress.status === 'failed' ? { message: progress.message } : {}),
    });
  });
  events.on('transfer-progress', (server, progress) => {
    // Only a transfer that switched the server: one that failed or was cancelled changed nothing.
    if (progress.status !== 'done') return;
    publish('server.transferred', {
      server,
      transfer: progress.transfer,
      from: progress.from,
      to: progress.to,
    });
  });
  events.on('ticket-event', (ticketId, kind, details) => {
    publish(TICKET_EVENTS[kind], {
      ticket: ticketId,
      title: details.title,
      owner: details.owner,
      by: details.by,
      status: details.status,
      ...(details.from === undefined ? {} : { from: details.from }),
    });
  });
}
