/**
 * Webhooks (admins only; the routes check the role): registering URLs for events, their signing
 * secrets (shown once, stored sealed), a test delivery, and the history of deliveries. Events of
 * the panel become deliveries through `publish` (docs/webhooks.md).
 */
import { randomBytes } from 'node:crypto';
import type {
  DeliveryStatus,
  Webhook,
  WebhookDelivery,
  WebhookEvent,
} from '../../domain/webhook.js';
import { AppError, notFound } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { SecretBox } from '../two-factor/secret-box.js';
import type { WebhookDeliverer } from './webhook-deliverer.js';
import type { UrlGuard } from './url-guard.js';
import type { WebhookFields, WebhooksRepository } from './webhooks.repository.js';

/** The fields sent; those left out keep their value (a change). */
export type WebhookInput = Partial<WebhookFields>;

/** A webhook as an admin sees it: never its secret. */
export type WebhookView = Webhook & {
  readonly lastDelivery: {
    readonly status: DeliveryStatus;
    readonly at: string;
    readonly responseStatus: number | null;
  } | null;
};

/** A delivery as an admin sees it: not its data. */
export type DeliveryView = Omit<WebhookDelivery, 'webhookId' | 'data'>;

const deliveryView = (delivery: WebhookDelivery): DeliveryView => ({
  id: delivery.id,
  event: delivery.event,
  status: delivery.status,
  attempts: delivery.attempts,
  createdAt: delivery.createdAt,
  lastAttemptAt: delivery.lastAttemptAt,
  nextAttemptAt: delivery.nextAttemptAt,
  responseStatus: delivery.responseStatus,
  error: delivery.error,
});

/** A new signing secret: 32 random bytes. */
const newSecret = (): string => `whsec_${randomBytes(32).toString('base64url')}`;

/** What a WebhooksService is made from. */
export interface WebhooksServiceDeps {
  readonly repo: WebhooksRepository;
  readonly guard: Pick<UrlGuard, 'check'>;
  readonly box: SecretBox;
  readonly deliverer: Pick<WebhookDeliverer, 'wake'>;
  readonly now: () => Date;
  readonly log: Logger;
}

export class WebhooksService {
  /** Deliveries being queued: awaited before the database closes. */
  readonly #queueing = new Set<Promise<void>>();
  readonly #deps: WebhooksServiceDeps;

  constructor(deps: WebhooksServiceDeps) {
    this.#deps = deps;
  }

  async list(): Promise<WebhookView[]> {
    const webhooks = await this.#deps.repo.list();
    return Promise.all(webhooks.map((webhook) => this.#view(webhook)));
  }

  async get(id: number): Promise<WebhookView> {
    return this.#view(await this.#find(id));
  }

  /** 400 `URL_NOT_ALLOWED` for a URL it may not reach; the secret is answered this once. */
  async create(input: WebhookInput): Promise<{ webhook: WebhookView; secret: string }> {
    const fields = checkFields({
      url: input.url ?? '',
      events: input.events ?? [],
      description: input.description ?? '',
      enabled: input.enabled ?? true,
    });
    await this.#deps.guard.check(fields.url);
    const secret = newSecret();
    const webhook = await this.#deps.repo.insert(
      fields,
      this.#deps.box.seal(secret),
      this.#deps.now().toISOString(),
    );
    return { webhook: await this.#view(webhook), secret };
  }

  /** Changes the fields sent; a new URL is checked as at registration. */
  async update(id: number, input: WebhookInput): Promise<WebhookView> {
    const current = await this.#find(id);
    const fields = checkFields({
      url: input.url ?? current.url,
      events: input.events ?? current.events,
      description: input.description ?? current.description,
      enabled: input.enabled ?? current.enabled,
    });
    if (input.url !== undefined) await this.#deps.guard.check(fields.url);
    const updated = await this.#deps.repo.update(id, fields);
    if (!updated) throw notFound('Webhook');
    return this.#view(updated);
  }

  /** Deletes the webhook and its history; a delivery under way is not recorded. */
  async remove(id: number): Promise<void> {
    if (!(await this.#deps.repo.delete(id))) throw notFound('Webhook');
  }

  /** A new signing secret, answered this once; the old one signs nothing more. */
  async rotateSecret(id: number): Promise<string> {
    const secret = newSecret();
    if (!(await this.#deps.repo.setSecret(id, this.#deps.box.seal(secret)))) {
      throw notFound('Webhook');
    }
    return secret;
  }

  /** Queues a `ping` to the webhook, enabled or not; answers the queued delivery. */
  async test(id: number): Promise<DeliveryView> {
    const webhook = await this.#find(id);
    const [delivery] = await this.#deps.repo.enqueue(
      [webhook.id],
      'ping',
      { webhook: webhook.id, message: 'A test delivery asked for by an admin' },
      this.#deps.now().toISOString(),
    );
    if (!delivery) throw new Error('unreachable: no delivery was queued');
    this.#deps.deliverer.wake();
    return deliveryView(delivery);
  }

  async deliveries(
    id: number,
    page: { limit: number; offset: number },
  ): Promise<{ deliveries: DeliveryView[]; total: number }> {
    await this.#find(id);
    const { deliveries, total } = await this.#deps.repo.deliveries(id, page);
    return { deliveries: deliveries.map(deliveryView), total };
  }

  /**
   * Queues a delivery of `event` to every enabled webhook that wants it. Never rejects: a
   * failure is logged (the event happened; the panel goes on).
   */
  publish(event: WebhookEvent, data: Readonly<Record<string, unknown>>): void {
    const queueing = this.#publish(event, data)
      .catch((error: unknown) => {
        this.#deps.log.error({ err: error, event }, 'could not queue webhook deliveries');
      })
      .finally(() => {
        this.#queueing.delete(queueing);
      });
    this.#queueing.add(queueing);
  }

  /** Resolves once every event published so far is queued. */
  async idle(): Promise<void> {
    while (this.#queueing.size > 0) await Promise.all([...this.#queueing]);
  }

  async #publish(event: WebhookEvent, data: Readonly<Record<string, unknown>>): Promise<void> {
    const webhooks = (await this.#deps.repo.list()).filter(
      (webhook) => webhook.enabled && webhook.events.includes(event),
    );
    if (webhooks.length === 0) return;
    await this.#deps.repo.enqueue(
      webhooks.map((webhook) => webhook.id),
      event,
      data,
      this.#deps.now().toISOString(),
    );
    this.#deps.deliverer.wake();
  }

  async #find(id: number): Promise<Webhook> {
    const webhook = await this.#deps.repo.find(id);
    if (!webhook) throw notFound('Webhook');
    return webhook;
  }

  async #view(webhook: Webhook): Promise<WebhookView> {
    const last = await this.#deps.repo.latestDelivery(webhook.id);
    return {
      id: webhook.id,
      url: webhook.url,
      events: [...webhook.events],
      description: webhook.description,
      enabled: webhook.enabled,
      createdAt: webhook.createdAt,
      lastDelivery: last
        ? {
            status: last.status,
            at: last.lastAttemptAt ?? last.createdAt,
            responseStatus: last.responseStatus,
          }
        : null,
    };
  }
}

/** The events once each, in the order given; 400 for none or a repeated one. */
function checkFields(fields: WebhookFields): WebhookFields {
  if (fields.events.length === 0) {
    throw new AppError('VALIDATION_FAILED', 'A webhook needs at least one event', {
      details: [{ path: 'body/events', message: 'must hold at least one event' }],
    });
  }
  const repeated = fields.events.find((event, index) => fields.events.indexOf(event) !== index);
  if (repeated !== undefined) {
    throw new AppError('VALIDATION_FAILED', `The event ${repeated} is listed twice`, {
      details: [{ path: 'body/events', message: `lists ${repeated} twice` }],
    });
  }
  return fields;
}
