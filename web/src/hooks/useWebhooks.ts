import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { unwrap, unwrapData } from '../api/client';
import { useServices } from '../api/context';
import type { AnswerData, RequestBody } from '../api/types';

const WEBHOOKS_KEY = ['admin', 'webhooks'] as const;
const deliveriesKey = (id: number) => [...WEBHOOKS_KEY, id, 'deliveries'] as const;

/** A webhook as the API shows it: never its secret. */
export type Webhook = AnswerData<'/api/admin/webhooks', 'get'>[number];
export type WebhookEvent = Webhook['events'][number];
export type Delivery = AnswerData<'/api/admin/webhooks/{id}/deliveries', 'get'>[number];
export type NewWebhook = RequestBody<'/api/admin/webhooks', 'post'>;
/** Any of url, events, description and enabled: the rest stays. */
export type WebhookChanges = RequestBody<'/api/admin/webhooks/{id}', 'put'>;

/** While a delivery of the history shown is pending, it is asked for this often. */
export const DELIVERIES_BUSY_INTERVAL_MS = 2_000;

/** Every webhook (admins), with the state of its last delivery. */
export function useWebhooks() {
  const { api } = useServices();
  return useQuery({
    queryKey: WEBHOOKS_KEY,
    queryFn: async () => unwrapData(api.GET('/api/admin/webhooks')),
    // A delivery's outcome arrives later (retries with back-off): the list follows it.
    refetchInterval: (query) =>
      query.state.data?.some((hook) => hook.lastDelivery?.status === 'pending') === true
        ? DELIVERIES_BUSY_INTERVAL_MS
        : 15_000,
  });
}

function useWebhooksChanged() {
  const queries = useQueryClient();
  return () => queries.invalidateQueries({ queryKey: WEBHOOKS_KEY });
}

/** Makes a webhook; the answer holds its signing secret, which the API shows this once. */
export function useCreateWebhook() {
  const { api } = useServices();
  const changed = useWebhooksChanged();
  return useMutation({
    mutationFn: async (body: NewWebhook) => unwrapData(api.POST('/api/admin/webhooks', { body })),
    onSuccess: changed,
  });
}

export function useUpdateWebhook(id: number) {
  const { api } = useServices();
  const changed = useWebhooksChanged();
  return useMutation({
    mutationFn: async (body: WebhookChanges) =>
      unwrapData(api.PUT('/api/admin/webhooks/{id}', { params: { path: { id } }, body })),
    onSuccess: changed,
  });
}

export function useDeleteWebhook(id: number) {
  const { api } = useServices();
  const changed = useWebhooksChanged();
  return useMutation({
    mutationFn: () => unwrap(api.DELETE('/api/admin/webhooks/{id}', { params: { path: { id } } })),
    onSuccess: changed,
  });
}

/** A new signing secret, shown this once; the old one stops at once. */
export function useRotateWebhookSecret(id: number) {
  const { api } = useServices();
  return useMutation({
    mutationFn: async () =>
      (await unwrapData(api.POST('/api/admin/webhooks/{id}/secret', { params: { path: { id } } })))
        .secret,
  });
}

/** Queues a `ping` delivery; the list and the history follow its outcome. */
export function useTestWebhook(id: number) {
  const { api } = useServices();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: async () =>
      unwrapData(api.POST('/api/admin/webhooks/{id}/test', { params: { path: { id } } })),
    onSuccess: () => queries.invalidateQueries({ queryKey: WEBHOOKS_KEY }),
  });
}

/** A page of a webhook's deliveries, newest first, with the number of all (`X-Total-Count`). */
export function useDeliveries(id: number, query: { limit: number; offset: number }) {
  const { api } = useServices();
  return useQuery({
    queryKey: [...deliveriesKey(id), query],
    queryFn: async () => {
      const answer = api.GET('/api/admin/webhooks/{id}/deliveries', {
        params: { path: { id }, query },
      });
      const data = await unwrapData(answer);
      const header = (await answer).response.headers.get('X-Total-Count');
      return { deliveries: data, total: header === null ? data.length : Number(header) };
    },
    placeholderData: keepPreviousData,
    refetchInterval: (query) =>
      query.state.data?.deliveries.some((delivery) => delivery.status === 'pending') === true
        ? DELIVERIES_BUSY_INTERVAL_MS
        : false,
  });
}
