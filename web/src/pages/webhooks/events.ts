/**
 * The webhooks page's own logic, without React: the events a webhook may follow, in words, and
 * the form's body for the API.
 */
import type { Delivery, NewWebhook, Webhook, WebhookEvent } from '../../hooks/useWebhooks';

const DESCRIPTIONS = {
  'server.started': 'A server started',
  'server.stopped': 'A server stopped',
  'server.crashed': 'A server crashed',
  'server.out-of-memory': 'A server ran out of memory',
  'server.transferred': 'A server was transferred to another node',
  'backup.done': 'A backup is done',
  'backup.failed': 'A backup failed',
  'ticket.created': 'A ticket was opened',
  'ticket.answered': 'A ticket was answered',
  'ticket.status-changed': "A ticket's status changed",
} as const satisfies Record<WebhookEvent, string>;

/** Every event, in the API's order. */
export const EVENTS = Object.keys(DESCRIPTIONS) as readonly WebhookEvent[];

export const describeEvent = (event: WebhookEvent): string => DESCRIPTIONS[event];

export const DELIVERY_LABELS: Readonly<Record<Delivery['status'], string>> = {
  pending: 'Pending',
  delivered: 'Delivered',
  failed: 'Failed',
};

/** What the form holds. */
export interface WebhookForm {
  readonly url: string;
  readonly events: ReadonlySet<WebhookEvent>;
  readonly description: string;
  readonly enabled: boolean;
}

export const EMPTY_FORM: WebhookForm = {
  url: '',
  events: new Set(),
  description: '',
  enabled: true,
};

export const formOf = (webhook: Webhook): WebhookForm => ({
  url: webhook.url,
  events: new Set(webhook.events),
  description: webhook.description,
  enabled: webhook.enabled,
});

/** The API's body of a form: events in the API's order, text trimmed. */
export const bodyOf = (form: WebhookForm): NewWebhook => ({
  url: form.url.trim(),
  events: EVENTS.filter((event) => form.events.has(event)),
  description: form.description.trim(),
  enabled: form.enabled,
});

/** What the form would change of `webhook` (nothing: `{}`). */
export function changesOf(webhook: Webhook, form: WebhookForm): Partial<NewWebhook> {
  const body = bodyOf(form);
  const sameEvents =
    body.events.length === webhook.events.length &&
    body.events.every((event) => webhook.events.includes(event));
  return {
    ...(body.url === webhook.url ? {} : { url: body.url }),
    ...(sameEvents ? {} : { events: body.events }),
    ...(body.description === webhook.description ? {} : { description: body.description }),
    ...(body.enabled === webhook.enabled ? {} : { enabled: body.enabled }),
  };
}
