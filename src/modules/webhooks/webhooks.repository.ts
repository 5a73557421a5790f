/** The only code that queries the webhooks and webhook_deliveries tables. */
import type { Kysely, Selectable } from 'kysely';
import { Type } from 'typebox';
import { readJson } from '../../db/json-column.js';
import type { Database, WebhookDeliveriesTable, WebhooksTable } from '../../db/schema.js';
import {
  WEBHOOK_EVENTS,
  type DeliveryEvent,
  type DeliveryStatus,
  type Webhook,
  type WebhookDelivery,
} from '../../domain/webhook.js';

const Events = Type.Array(Type.Union(WEBHOOK_EVENTS.map((event) => Type.Literal(event))));
const Data = Type.Record(Type.String(), Type.Unknown());

/** What an admin sets on a webhook. */
export type WebhookFields = Pick<Webhook, 'url' | 'events' | 'description' | 'enabled'>;

/** A webhook with its sealed signing secret: for the deliverer only, never answered. */
export interface WebhookWithSecret extends Webhook {
  readonly sealedSecret: string;
}

/** How an attempt went, as recorded. */
export interface AttemptRecord {
  readonly status: DeliveryStatus;
  readonly attempts: number;
  readonly at: string;
  readonly nextAttemptAt: string | null;
  readonly responseStatus: number | null;
  readonly error: string | null;
}

const toWebhook = (row: Selectable<WebhooksTable>): WebhookWithSecret => ({
  id: row.id,
  url: row.url,
  events: readJson(row.events, Events, 'webhooks.events'),
  description: row.description,
  enabled: row.enabled === 1,
  createdAt: row.created_at,
  sealedSecret: row.secret,
});

const toDelivery = (row: Selectable<WebhookDeliveriesTable>): WebhookDelivery => ({
  id: row.id,
  webhookId: row.webhook_id,
  event: row.event as DeliveryEvent,
  data: readJson(row.data, Data, 'webhook_deliveries.data'),
  status: row.status,
  attempts: row.attempts,
  createdAt: row.created_at,
  lastAttemptAt: row.last_attempt_at,
  nextAttemptAt: row.next_attempt_at,
  responseStatus: row.response_status,
  error: row.error,
});

export class WebhooksRepository {
  readonly #db: Kysely<Database>;

  constructor(db: Kysely<Database>) {
    this.#db = db;
  }

  /** Every webhook, by id. */
  async list(): Promise<WebhookWithSecret[]> {
    const rows = await this.#db.selectFrom('webhooks').selectAll().orderBy('id').execute();
    return rows.map(toWebhook);
  }

  async find(id: number): Promise<WebhookWithSecret | undefined> {
    const row = await this.#db
      .selectFrom('webhooks')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    return row && toWebhook(row);
  }

  async insert(fields: WebhookFields, sealedSecret: string, at: string): Promise<Webhook> {
    const row = await this.#db
      .insertInto('webhooks')
      .values({
        url: fields.url,
        events: JSON.stringify(fields.events),
        description: fields.description,
        enabled: fields.enabled ? 1 : 0,
        secret: sealedSecret,
        created_at: at,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toWebhook(row);
  }

  async update(id: number, fields: WebhookFields): Promise<Webhook | undefined> {
    const row = await this.#db
      .updateTable('webhooks')
      .set({
        url: fields.url,
        events: JSON.stringify(fields.events),
        description: fields.description,
        enabled: fields.enabled ? 1 : 0,
      })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
    return row && toWebhook(row);
  }

  async setSecret(id: number, sealedSecret: string): Promise<boolean> {
    const result = await this.#db
      .updateTable('webhooks')
      .set({ secret: sealedSecret })
      .where('id', '=', id)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  /** Deletes the webhook and its deliveries. */
  async delete(id: number): Promise<boolean> {
    return this.#db.transaction().execute(async (trx) => {
      await trx.deleteFrom('webhook_deliveries').where('webhook_id', '=', id).execute();
      const result = await trx.deleteFrom('webhooks').where('id', '=', id).executeTakeFirst();
      return result.numDeletedRows > 0n;
    });
  }

  /** Queues a delivery of `event` to each webhook, due at once; answers them. */
  async enqueue(
    webhookIds: readonly number[],
    event: DeliveryEvent,
    data: Readonly<Record<string, unknown>>,
    at: string,
  ): Promise<WebhookDelivery[]> {
    if (webhookIds.length === 0) return [];
    const rows = await this.#db
      .insertInto('webhook_deliveries')
      .values(
        webhookIds.map((webhookId) => ({
          webhook_id: webhookId,
          event,
          data: JSON.stringify(data),
          status: 'pending' as const,
          attempts: 0,
          created_at: at,
          last_attempt_at: null,
          next_attempt_at: at,
          response_status: null,
          error: null,
        })),
      )
      .returningAll()
      .execute();
    return rows.map(toDelivery);
  }

  /** A page of the webhook's deliveries, newest first, and how many it has. */
  async deliveries(
    webhookId: number,
    page: { limit: number; offset: number },
  ): Promise<{ deliveries: WebhookDelivery[]; total: number }> {
    const [rows, count] = await Promise.all([
      this.#db
        .selectFrom('webhook_deliveries')
        .selectAll()
        .where('webhook_id', '=', webhookId)
        .orderBy('id', 'desc')
        .limit(page.limit)
        .offset(page.offset)
        .execute(),
      this.#db
        .selectFrom('webhook_deliveries')
        .select((eb) => eb.fn.countAll().as('count'))
        .where('webhook_id', '=', webhookId)
        .executeTakeFirstOrThrow(),
    ]);
    return { deliveries: rows.map(toDelivery), total: Number(count.count) };
  }

  /** The webhook's newest delivery, or undefined. */
  async latestDelivery(webhookId: number): Promise<WebhookDelivery | undefined> {
    const row = await this.#db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('webhook_id', '=', webhookId)
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row && toDelivery(row);
  }

  /** Pending deliveries due at `at`, the longest waiting first. */
  async due(at: string, limit: number): Promise<WebhookDelivery[]> {
    const rows = await this.#db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', at)
      .orderBy('next_attempt_at')
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map(toDelivery);
  }

  /** When the next pending delivery is due, or null when none is pending. */
  async nextDueAt(): Promise<string | null> {
    const row = await this.#db
      .selectFrom('webhook_deliveries')
      .select((eb) => eb.fn.min('next_attempt_at').as('next'))
      .where('status', '=', 'pending')
      .executeTakeFirst();
    return row?.next ?? null;
  }

  async recordAttempt(id: number, attempt: AttemptRecord): Promise<void> {
    await this.#db
      .updateTable('webhook_deliveries')
      .set({
        status: attempt.status,
        attempts: attempt.attempts,
        last_attempt_at: attempt.at,
        next_attempt_at: attempt.nextAttemptAt,
        response_status: attempt.responseStatus,
        error: attempt.error,
      })
      .where('id', '=', id)
      .execute();
  }
}
