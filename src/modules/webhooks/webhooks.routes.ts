import { responses } from '../../http/schemas.js';
import type { App } from '../../http/types.js';
import {
  CreatedWebhookEnvelope,
  CreateWebhookBody,
  DeletedEnvelope,
  DeliveriesQuery,
  DeliveryEnvelope,
  DeliveryListEnvelope,
  SecretEnvelope,
  UpdateWebhookBody,
  WebhookEnvelope,
  WebhookListEnvelope,
  WebhookParams,
} from './webhooks.schemas.js';
import type { WebhooksService } from './webhooks.service.js';

const TAGS = ['webhooks'];
const config = { access: { action: 'webhooks.manage' } } as const;

/** Webhooks: admins only (docs/webhooks.md). */
export function webhooksRoutes(app: App, webhooks: WebhooksService): void {
  app.get(
    '/api/admin/webhooks',
    {
      // Polled by the web UI: its request lines are logged at debug (src/http/logging.ts).
      config: { ...config, polled: true },
      schema: {
        tags: TAGS,
        summary: 'Every webhook, by id (admin); never their secrets',
        response: responses(WebhookListEnvelope, 401, 403),
      },
    },
    async () => ({ message: 'Webhooks', data: await webhooks.list() }),
  );

  app.post(
    '/api/admin/webhooks',
    {
      config,
      schema: {
        tags: TAGS,
        summary: 'Register a URL for events (admin); answers its signing secret this once',
        description:
          '400 `URL_NOT_ALLOWED` for a URL that is not http(s), or that points at the panel’s own host, loopback, a private, link-local or otherwise non-public address (after DNS resolution), unless WEBHOOK_ALLOWED_HOSTS allows its host.',
        body: CreateWebhookBody,
        response: responses(CreatedWebhookEnvelope, 400, 401, 403),
      },
    },
    async (request) => ({
      message: 'Webhook created: copy its secret now',
      data: await webhooks.create(request.body),
    }),
  );

  app.get(
    '/api/admin/webhooks/:id',
    {
      config,
      schema: {
        tags: TAGS,
        summary: 'A webhook and how its newest delivery went (admin)',
        params: WebhookParams,
        response: responses(WebhookEnvelope, 400, 401, 403, 404),
      },
    },
    async (request) => ({ message: 'Webhook', data: await webhooks.get(request.params.id) }),
  );

  app.put(
    '/api/admin/webhooks/:id',
    {
      config,
      schema: {
        tags: TAGS,
        summary: 'Change the fields sent (admin); a new URL is checked as at registration',
        params: WebhookParams,
        body: UpdateWebhookBody,
        response: responses(WebhookEnvelope, 400, 401, 403, 404),
      },
    },
    async (request) => ({
      message: 'Webhook saved',
      data: await webhooks.update(request.params.id, request.body),
    }),
  );

  app.delete(
    '/api/admin/webhooks/:id',
    {
      config,
      schema: {
        tags: TAGS,
        summary: 'Delete a webhook and its delivery history (admin)',
        params: WebhookParams,
        response: responses(DeletedEnvelope, 400, 401, 403, 404),
      },
    },
    async (request) => {
      await webhooks.remove(request.params.id);
      return { message: 'Webhook deleted', data: null };
    },
  );

  app.post(
    '/api/admin/webhooks/:id/secret',
    {
      config,
      schema: {
        tags: TAGS,
        summary: 'A new signing secret, answered this once; the old one signs nothing more',
        params: WebhookParams,
        response: responses(SecretEnvelope, 400, 401, 403, 404),
      },
    },
    async (request) => ({
      message: 'New secret',
      data: { secret: await webhooks.rotateSecret(request.params.id) },
    }),
  );

  app.post(
    '/api/admin/webhooks/:id/test',
    {
      config,
      schema: {
        tags: TAGS,
        summary: 'Queue a `ping` delivery to the webhook (admin), enabled or not',
        description: 'The delivery is queued; its outcome shows in the deliveries.',
        params: WebhookParams,
        response: responses(DeliveryEnvelope, 400, 401, 403, 404),
      },
    },
    async (request) => ({
      message: 'Test delivery queued',
      data: await webhooks.test(request.params.id),
    }),
  );

  app.get(
    '/api/admin/webhooks/:id/deliveries',
    {
      // Polled by the web UI: its request lines are logged at debug (src/http/logging.ts).
      config: { ...config, polled: true },
      schema: {
        tags: TAGS,
        summary: "The webhook's deliveries, newest first (admin)",
        description:
          'Paginated with limit (1-200, default 50) and offset; X-Total-Count holds the number of deliveries.',
        params: WebhookParams,
        querystring: DeliveriesQuery,
        response: responses(DeliveryListEnvelope, 400, 401, 403, 404),
      },
    },
    async (request, reply) => {
      const { deliveries, total } = await webhooks.deliveries(request.params.id, request.query);
      reply.header('X-Total-Count', String(total));
      return { message: 'Deliveries', data: deliveries };
    },
  );
}
