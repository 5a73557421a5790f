/**
 * The routes of issue 17 still being written (webhooks) typed by hand from the contract
 * (/work/contracts-17.md) while their backends are written: they are added to the generated
 * `paths`, so the pages call them through the typed client like any other route. Delete this file
 * once `npm run gen:api` has them (the compiler then reports each route declared twice).
 */
import type { components } from './schema';

type Headers = Record<string, unknown>;
interface Answer<T> {
  headers: Headers;
  content: { 'application/json': { message: string; data: T } };
}
interface Failure {
  headers: Headers;
  content: { 'application/json': components['schemas']['def-0'] };
}
interface Failures {
  400: Failure;
  401: Failure;
  403: Failure;
  404: Failure;
}
interface Params<Query, Path> {
  query?: Query;
  header?: never;
  path: Path;
  cookie?: never;
}
interface NoParams {
  query?: never;
  header?: never;
  path?: never;
  cookie?: never;
}
interface Op<P, Body, Responses> {
  parameters: P;
  requestBody: { content: { 'application/json': Body } };
  responses: Responses & Failures;
}
interface OpNoBody<P, Responses> {
  parameters: P;
  requestBody?: never;
  responses: Responses & Failures;
}

type WebhookEvent =
  | 'server.started'
  | 'server.stopped'
  | 'server.crashed'
  | 'server.out-of-memory'
  | 'backup.done'
  | 'backup.failed'
  | 'ticket.created'
  | 'ticket.answered'
  | 'ticket.status-changed';
type DeliveryStatus = 'pending' | 'delivered' | 'failed';
interface PendingWebhook {
  id: number;
  url: string;
  events: WebhookEvent[];
  description: string;
  enabled: boolean;
  createdAt: string;
  lastDelivery: { status: DeliveryStatus; at: string; responseStatus: number | null } | null;
}
interface PendingDelivery {
  id: number;
  event: WebhookEvent | 'ping';
  status: DeliveryStatus;
  attempts: number;
  createdAt: string;
  lastAttemptAt: string | null;
  nextAttemptAt: string | null;
  responseStatus: number | null;
  error: string | null;
}
interface WebhookInput {
  url: string;
  events: WebhookEvent[];
  description?: string;
  enabled?: boolean;
}
interface IdPath {
  query?: never;
  header?: never;
  path: { id: number };
  cookie?: never;
}

declare module './schema' {
  interface paths {
    '/api/admin/webhooks': {
      parameters: NoParams;
      get: OpNoBody<NoParams, { 200: Answer<PendingWebhook[]> }>;
      post: Op<
        NoParams,
        WebhookInput,
        { 201: Answer<{ webhook: PendingWebhook; secret: string }> }
      >;
    };
    '/api/admin/webhooks/{id}': {
      parameters: NoParams;
      get: OpNoBody<IdPath, { 200: Answer<PendingWebhook> }>;
      patch: Op<IdPath, Partial<WebhookInput>, { 200: Answer<PendingWebhook> }>;
      delete: OpNoBody<IdPath, { 200: Answer<null> }>;
    };
    '/api/admin/webhooks/{id}/secret': {
      parameters: NoParams;
      post: OpNoBody<IdPath, { 200: Answer<{ secret: string }> }>;
    };
    '/api/admin/webhooks/{id}/test': {
      parameters: NoParams;
      post: OpNoBody<IdPath, { 202: Answer<PendingDelivery> }>;
    };
    '/api/admin/webhooks/{id}/deliveries': {
      parameters: NoParams;
      get: OpNoBody<
        Params<{ limit?: number; offset?: number }, { id: number }>,
        { 200: Answer<PendingDelivery[]> }
      >;
    };
  }
}
