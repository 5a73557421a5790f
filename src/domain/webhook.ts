/**
 * Webhooks: URLs an admin registered for events of the panel, each delivered as a signed JSON POST
 * and retried with back-off until it is answered with a 2xx (docs/webhooks.md).
 */

export type WebhookEvent =
  | 'server.started'
  | 'server.stopped'
  | 'server.crashed'
  | 'server.out-of-memory'
  | 'server.transferred'
  | 'backup.done'
  | 'backup.failed'
  | 'ticket.created'
  | 'ticket.answered'
  | 'ticket.status-changed';

export const WEBHOOK_EVENTS: readonly WebhookEvent[] = [
  'server.started',
  'server.stopped',
  'server.crashed',
  'server.out-of-memory',
  'server.transferred',
  'backup.done',
  'backup.failed',
  'ticket.created',
  'ticket.answered',
  'ticket.status-changed',
];

/** What a delivery carries: an event, or `ping` (the test an admin asks for). */
export type DeliveryEvent = WebhookEvent | 'ping';

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';
export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'delivered', 'failed'];

/** A delivery is tried at most this many times, then `failed`. */
export const MAX_ATTEMPTS = 6;

/** The waits between attempts: after the first failure 10 s, then 1 min, 5 min, 30 min, 2 h. */
export const RETRY_DELAYS_MS: readonly number[] = [
  10_000,
  60_000,
  5 * 60_000,
  30 * 60_000,
  2 * 60 * 60_000,
];

export interface Webhook {
  readonly id: number;
  readonly url: string;
  readonly events: readonly WebhookEvent[];
  readonly description: string;
  readonly enabled: boolean;
  readonly createdAt: string;
}

export interface WebhookDelivery {
  readonly id: number;
  readonly webhookId: number;
  readonly event: DeliveryEvent;
  /** The payload's `data`. */
  readonly data: Readonly<Record<string, unknown>>;
  readonly status: DeliveryStatus;
  readonly attempts: number;
  readonly createdAt: string;
  readonly lastAttemptAt: string | null;
  readonly nextAttemptAt: string | null;
  readonly responseStatus: number | null;
  readonly error: string | null;
}
