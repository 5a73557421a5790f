import { Type } from 'typebox';
import { DELIVERY_STATUSES, WEBHOOK_EVENTS } from '../../domain/webhook.js';
import { Envelope } from '../../http/schemas.js';

export const WebhookParams = Type.Object({
  id: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }),
});

const EventSchema = Type.Union(WEBHOOK_EVENTS.map((event) => Type.Literal(event)));
const DeliveryStatusSchema = Type.Union(DELIVERY_STATUSES.map((status) => Type.Literal(status)));

const fields = {
  url: Type.String({
    minLength: 1,
    maxLength: 2048,
    description:
      'An http(s) URL. 400 `URL_NOT_ALLOWED` when it is not http(s), or its host is the panel’s own or resolves to a loopback, private, link-local or otherwise non-public address, unless WEBHOOK_ALLOWED_HOSTS allows it',
  }),
  events: Type.Array(EventSchema, {
    minItems: 1,
    maxItems: WEBHOOK_EVENTS.length,
    description: 'The events delivered to the URL, each once',
  }),
  description: Type.String({ maxLength: 200, description: "An admin's note; empty by default" }),
  enabled: Type.Boolean({ description: 'true by default; a disabled webhook receives nothing' }),
};

export const CreateWebhookBody = Type.Object(
  {
    url: fields.url,
    events: fields.events,
    description: Type.Optional(fields.description),
    enabled: Type.Optional(fields.enabled),
  },
  { additionalProperties: false },
);

export const UpdateWebhookBody = Type.Object(
  {
    url: Type.Optional(fields.url),
    events: Type.Optional(fields.events),
    description: Type.Optional(fields.description),
    enabled: Type.Optional(fields.enabled),
  },
  { additionalProperties: false },
);

export const DeliveriesQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
    offset: Type.Integer({ minimum: 0, maximum: 1_000_000_000, default: 0 }),
  },
  { additionalProperties: false },
);

export const WebhookSchema = Type.Object({
  id: Type.Integer(),
  url: Type.String(),
  events: Type.Array(EventSchema),
  description: Type.String(),
  enabled: Type.Boolean(),
  createdAt: Type.String({ format: 'date-time' }),
  lastDelivery: Type.Union(
    [
      Type.Object({
        status: DeliveryStatusSchema,
        at: Type.String({ format: 'date-time', description: 'Its last attempt, or its queueing' }),
        responseStatus: Type.Union([Type.Integer(), Type.Null()]),
      }),
      Type.Null(),
    ],
    { description: 'The newest delivery; null before the first' },
  ),
});

export const DeliverySchema = Type.Object({
  id: Type.Integer({ description: 'Also the `id` of the payload and `X-Panel-Delivery`' }),
  event: Type.Union([EventSchema, Type.Literal('ping')]),
  status: DeliveryStatusSchema,
  attempts: Type.Integer({ description: 'Attempts made so far, at most 6' }),
  createdAt: Type.String({ format: 'date-time' }),
  lastAttemptAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  nextAttemptAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'When a pending delivery is tried next; null once delivered or failed',
  }),
  responseStatus: Type.Union([Type.Integer(), Type.Null()], {
    description: "The last attempt's HTTP status; null when no answer came",
  }),
  error: Type.Union([Type.String(), Type.Null()], {
    description: 'Why the last attempt failed, with at most 200 characters of the answer',
  }),
});

export const WebhookEnvelope = Envelope(WebhookSchema);
export const WebhookListEnvelope = Envelope(Type.Array(WebhookSchema));
export const CreatedWebhookEnvelope = Envelope(
  Type.Object({
    webhook: WebhookSchema,
    secret: Type.String({ description: 'The signing secret: shown this once' }),
  }),
);
export const SecretEnvelope = Envelope(
  Type.Object({ secret: Type.String({ description: 'The new signing secret: shown this once' }) }),
);
export const DeliveryEnvelope = Envelope(DeliverySchema);
export const DeliveryListEnvelope = Envelope(Type.Array(DeliverySchema));
export const DeletedEnvelope = Envelope(Type.Null());
