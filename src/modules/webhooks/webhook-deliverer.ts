/**
 * The delivery worker: one per panel. Deliveries wait in the database (`webhook_deliveries`), so
 * a retry that is due while the panel is down is made once it is back; the worker tries what is
 * due, then sleeps until the next one is due. A failed attempt (no 2xx, an error, no answer in
 * time, a URL no longer allowed) is retried after the next wait of `retryDelaysMs`; after
 * MAX_ATTEMPTS attempts the delivery is `failed`.
 *
 * Each attempt is signed afresh: `X-Panel-Signature: sha256=<hex HMAC-SHA256 of
 * "<X-Panel-Timestamp>.<body>">` under the webhook's secret (docs/webhooks.md).
 */
import { createHmac } from 'node:crypto';
import { MAX_ATTEMPTS, type WebhookDelivery } from '../../domain/webhook.js';
import { AppError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { SecretBox } from '../two-factor/secret-box.js';
import { send as sendOverHttp, type SendResult } from './webhook-sender.js';
import type { UrlGuard } from './url-guard.js';
import type { WebhooksRepository } from './webhooks.repository.js';

/** Deliveries tried at once. */
const BATCH = 10;
/** setTimeout's longest wait; a later delivery is looked at again then. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The body of a delivery, exactly as sent and signed. */
export const payloadOf = (delivery: WebhookDelivery): string =>
  JSON.stringify({
    id: delivery.id,
    event: delivery.event,
    at: delivery.createdAt,
    data: delivery.data,
  });

/** `sha256=<hex>`: the HMAC-SHA256 of `<timestamp>.<body>` under the secret's UTF-8 bytes. */
export const signatureOf = (secret: string, timestamp: string, body: string): string =>
  `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;

/** What a WebhookDeliverer is made from. */
export interface WebhookDelivererDeps {
  readonly repo: WebhooksRepository;
  readonly guard: Pick<UrlGuard, 'check'>;
  readonly box: SecretBox;
  readonly now: () => Date;
  /** The waits after each failed attempt; MAX_ATTEMPTS - 1 of them (the last repeats). */
  readonly retryDelaysMs: readonly number[];
  /** How long an attempt may wait for the answer's status. */
  readonly timeoutMs: number;
  readonly log: Logger;
  readonly userAgent: string;
}

export class WebhookDeliverer {
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<void> | null = null;
  #again = false;
  #stopped = false;
  readonly #abort = new AbortController();
  readonly #deps: WebhookDelivererDeps;

  constructor(deps: WebhookDelivererDeps) {
    this.#deps = deps;
  }

  /** Something may be due now (a new delivery, the panel's start): it is tried soon. */
  wake(): void {
    if (this.#stopped) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = this.#drain()
      .catch((error: unknown) => {
        this.#deps.log.error({ err: error }, 'webhook deliveries could not be processed');
      })
      .finally(() => {
        this.#running = null;
        if (this.#again) {
          this.#again = false;
          this.wake();
        }
      });
  }

  /**
   * No attempt starts any more and the ones under way are cut short; they are not counted and
   * are made again after the panel's next start.
   */
  stop(): void {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    this.#abort.abort();
  }

  /** Resolves once no attempt is under way. */
  async idle(): Promise<void> {
    while (this.#running) await this.#running;
  }

  async #drain(): Promise<void> {
    try {
      for (;;) {
        if (this.#stopped) return;
        this.#again = false;
        const due = await this.#deps.repo.due(this.#deps.now().toISOString(), BATCH);
        if (due.length === 0) break;
        await Promise.all(due.map((delivery) => this.#attempt(delivery)));
      }
    } finally {
      // Also after a failure: what is still pending is tried when it is due.
      await this.#arm();
    }
  }

  /** Sleeps until the next pending delivery is due. */
  async #arm(): Promise<void> {
    const next = await this.#deps.repo.nextDueAt();
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    if (next === null || this.#stopped) return;
    const wait = Math.min(Math.max(0, Date.parse(next) - this.#deps.now().getTime()), MAX_TIMER_MS);
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.wake();
    }, wait);
    this.#timer.unref();
  }

  async #attempt(delivery: WebhookDelivery): Promise<void> {
    const webhook = await this.#deps.repo.find(delivery.webhookId);
    // Deleted meanwhile: its deliveries went with it.
    if (!webhook) return;
    const attempts = delivery.attempts + 1;
    let result: SendResult;
    let final = false;
    const secret = this.#deps.box.open(webhook.sealedSecret);
    if (!webhook.enabled && delivery.event !== 'ping') {
      result = { status: null, error: 'The webhook is disabled' };
      final = true;
    } else if (secret === null) {
      result = {
        status: null,
        error: 'The signing secret cannot be read (JWT_SECRET changed?): set a new secret',
      };
      final = true;
    } else {
      result = await this.#post(webhook.url, delivery, secret);
      // Cut short by the panel's stop: not counted, made again after the next start.
      if (this.#abort.signal.aborted) return;
    }
    const delivered = result.status !== null && result.status >= 200 && result.status < 300;
    const at = this.#deps.now();
    const status = delivered
      ? 'delivered'
      : final || attempts >= MAX_ATTEMPTS
        ? 'failed'
        : 'pending';
    const delays = this.#deps.retryDelaysMs;
    const wait = delays[Math.min(attempts - 1, delays.length - 1)] ?? 0;
    await this.#deps.repo.recordAttempt(delivery.id, {
      status,
      attempts,
      at: at.toISOString(),
      nextAttemptAt: status === 'pending' ? new Date(at.getTime() + wait).toISOString() : null,
      responseStatus: result.status,
      error: result.error,
    });
    if (status === 'failed') {
      this.#deps.log.warn(
        { webhook: webhook.id, delivery: delivery.id, attempts },
        'a webhook delivery failed for good',
      );
    }
  }

  async #post(url: string, delivery: WebhookDelivery, secret: string): Promise<SendResult> {
    let target;
    try {
      // Checked again at every attempt: DNS may now answer another address.
      target = await this.#deps.guard.check(url);
    } catch (error) {
      if (error instanceof AppError) return { status: null, error: error.message };
      throw error;
    }
    const body = payloadOf(delivery);
    const timestamp = String(Math.floor(this.#deps.now().getTime() / 1000));
    return sendOverHttp(
      target,
      {
        'Content-Type': 'application/json',
        'User-Agent': this.#deps.userAgent,
        'X-Panel-Event': delivery.event,
        'X-Panel-Delivery': String(delivery.id),
        'X-Panel-Timestamp': timestamp,
        'X-Panel-Signature': signatureOf(secret, timestamp, body),
      },
      body,
      { timeoutMs: this.#deps.timeoutMs, signal: this.#abort.signal },
    );
  }
}
