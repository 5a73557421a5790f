import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { unwrap, unwrapData } from '../api/client';
import { useServices } from '../api/context';
import type { AnswerData, RequestBody } from '../api/types';

/** A schedule as the API answers it: when, what, its next run and how its last run went. */
export type Schedule = AnswerData<'/api/servers/{server}/schedules', 'get'>[number];
/** What the create and edit form sends. */
export type ScheduleInput = RequestBody<'/api/servers/{server}/schedules', 'post'>;

const schedulesKey = (server: string) => ['server', server, 'schedules'] as const;

/** How often the list is asked for again: a next run passes, a run ends, elsewhere too. */
export const SCHEDULES_INTERVAL_MS = 10_000;

/** The server's schedules, by id. */
export function useSchedules(server: string) {
  const { api } = useServices();
  return useQuery({
    queryKey: schedulesKey(server),
    queryFn: async () =>
      unwrapData(api.GET('/api/servers/{server}/schedules', { params: { path: { server } } })),
    refetchInterval: SCHEDULES_INTERVAL_MS,
  });
}

function useSchedulesChanged(server: string) {
  const queries = useQueryClient();
  return () => queries.invalidateQueries({ queryKey: schedulesKey(server) });
}

export function useCreateSchedule(server: string) {
  const { api } = useServices();
  const changed = useSchedulesChanged(server);
  return useMutation({
    mutationFn: async (body: ScheduleInput) =>
      unwrapData(
        api.POST('/api/servers/{server}/schedules', { params: { path: { server } }, body }),
      ),
    onSuccess: changed,
  });
}

export function useUpdateSchedule(server: string) {
  const { api } = useServices();
  const changed = useSchedulesChanged(server);
  return useMutation({
    mutationFn: async ({ id, body }: { id: number; body: ScheduleInput }) =>
      unwrapData(
        api.PUT('/api/servers/{server}/schedules/{id}', {
          params: { path: { server, id } },
          body,
        }),
      ),
    onSuccess: changed,
  });
}

export function useDeleteSchedule(server: string) {
  const { api } = useServices();
  const changed = useSchedulesChanged(server);
  return useMutation({
    mutationFn: async (id: number) =>
      unwrap(
        api.DELETE('/api/servers/{server}/schedules/{id}', { params: { path: { server, id } } }),
      ),
    onSuccess: changed,
  });
}

/** Runs a schedule now; the answer comes once the run began (409 while one is in progress). */
export function useRunSchedule(server: string) {
  const { api } = useServices();
  const changed = useSchedulesChanged(server);
  return useMutation({
    mutationFn: async (id: number) =>
      unwrap(
        api.POST('/api/servers/{server}/schedules/{id}/run', { params: { path: { server, id } } }),
      ),
    onSuccess: changed,
  });
}
