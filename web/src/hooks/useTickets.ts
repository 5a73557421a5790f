import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { unwrap, unwrapData } from '../api/client';
import { useServices } from '../api/context';
import type { Query, RequestBody } from '../api/types';

export const TICKETS_KEY = ['tickets'] as const;
const ticketKey = (id: number) => ['ticket', id] as const;

type Status = RequestBody<'/api/tickets/{id}/status', 'put'>['status'];
export type NewTicket = RequestBody<'/api/tickets/create', 'post'>;
export type TicketListQuery = Query<'/api/tickets', 'get'>;

/**
 * A page of the tickets the caller may see (own ones; every one for admin and support), newest
 * activity first, with the number matching the filter (`X-Total-Count`). The page shown stays
 * while the next one loads, so the pager does not jump.
 */
export function useTickets(query: TicketListQuery) {
  const { api } = useServices();
  return useQuery({
    queryKey: [...TICKETS_KEY, query],
    queryFn: async () => {
      const answer = api.GET('/api/tickets', { params: { query } });
      const data = await unwrapData(answer);
      const header = (await answer).response.headers.get('X-Total-Count');
      return { tickets: data, total: header === null ? data.length : Number(header) };
    },
    placeholderData: keepPreviousData,
  });
}

/** One ticket with its newest messages and status changes. */
export function useTicket(id: number) {
  const { api } = useServices();
  return useQuery({
    queryKey: ticketKey(id),
    queryFn: async () => unwrapData(api.GET('/api/tickets/{id}', { params: { path: { id } } })),
    // A refusal (404 for a ticket one may not see) is an answer, not a hiccup to retry.
    retry: false,
  });
}

/** Opens a ticket; it is in the cache at once, and the lists are fetched again. */
export function useCreateTicket() {
  const { api } = useServices();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: async (ticket: NewTicket) =>
      unwrapData(api.POST('/api/tickets/create', { body: ticket })),
    onSuccess: async (ticket) => {
      queries.setQueryData(ticketKey(ticket.id), ticket);
      await queries.invalidateQueries({ queryKey: TICKETS_KEY });
    },
  });
}

/** Adds a message; the ticket (its thread, its activity time) and the lists are fetched again. */
export function useReply(id: number) {
  const { api } = useServices();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: async (text: string) =>
      unwrapData(
        api.POST('/api/tickets/{id}/message', { params: { path: { id } }, body: { text } }),
      ),
    onSettled: async () => {
      await Promise.all([
        queries.invalidateQueries({ queryKey: ticketKey(id) }),
        queries.invalidateQueries({ queryKey: TICKETS_KEY }),
      ]);
    },
  });
}

/** Sets the status (admin, support); the answer is the ticket as it now is. */
export function useSetStatus(id: number) {
  const { api } = useServices();
  const queries = useQueryClient();
  return useMutation({
    mutationFn: async (status: Status) =>
      unwrapData(
        api.PUT('/api/tickets/{id}/status', { params: { path: { id } }, body: { status } }),
      ),
    onSuccess: async (ticket) => {
      queries.setQueryData(ticketKey(id), ticket);
      await queries.invalidateQueries({ queryKey: TICKETS_KEY });
    },
  });
}

/** The next older page of a ticket's messages and status changes, from the cursors given. */
export function useOlderEntries(id: number) {
  const { api } = useServices();
  return useMutation({
    mutationFn: async (cursors: { messages: string | null; history: string | null }) => {
      const path = { id };
      const [messages, history] = await Promise.all([
        cursors.messages === null
          ? null
          : unwrap(
              api.GET('/api/tickets/{id}/messages', {
                params: { path, query: { before: cursors.messages, limit: 50 } },
              }),
            ).then((answer) => answer.data),
        cursors.history === null
          ? null
          : unwrap(
              api.GET('/api/tickets/{id}/history', {
                params: { path, query: { before: cursors.history, limit: 50 } },
              }),
            ).then((answer) => answer.data),
      ]);
      return { messages, history };
    },
  });
}
