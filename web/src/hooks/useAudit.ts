import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { unwrapData } from '../api/client';
import { useServices } from '../api/context';
import type { Answer, AnswerData, Query } from '../api/types';

type ListAnswer = Answer<'/api/audit', 'get'>;
/** One recorded action: who, how, what, on which server, and whether it went through. */
export type AuditEntry = AnswerData<'/api/audit', 'get'>[number];
export type AuditQuery = Query<'/api/audit', 'get'>;
export type ServerAuditQuery = Query<'/api/servers/{server}/audit', 'get'>;

/** A page of entries and the number of all entries matching the filters (`X-Total-Count`). */
export interface AuditPage {
  readonly entries: readonly AuditEntry[];
  readonly total: number;
}

async function pageOf(
  request: Promise<{ data?: ListAnswer; error?: unknown; response: Response }>,
): Promise<AuditPage> {
  const data = await unwrapData(request);
  const header = (await request).response.headers.get('X-Total-Count');
  return { entries: data, total: header === null ? data.length : Number(header) };
}

/**
 * The whole panel's audit log (admins), newest first, a page at a time. The page shown stays
 * while the next one loads, so the pager does not jump.
 */
export function useAuditLog(query: AuditQuery) {
  const { api } = useServices();
  return useQuery({
    queryKey: ['audit', query],
    queryFn: () => pageOf(api.GET('/api/audit', { params: { query } })),
    placeholderData: keepPreviousData,
  });
}

/** One server's activity (holders of its `settings` permission, and admins). */
export function useServerAudit(server: string, query: ServerAuditQuery) {
  const { api } = useServices();
  return useQuery({
    queryKey: ['server', server, 'audit', query],
    queryFn: () =>
      pageOf(api.GET('/api/servers/{server}/audit', { params: { path: { server }, query } })),
    placeholderData: keepPreviousData,
  });
}
