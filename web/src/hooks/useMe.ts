import { useQuery } from '@tanstack/react-query';
import { unwrap } from '../api/client';
import { useServices } from '../api/context';

export const ME_KEY = ['me'] as const;

/** The signed-in account as the API sees it now (`GET /api/auth/me`: banned users too). */
export function useMe() {
  const { api } = useServices();
  return useQuery({ queryKey: ME_KEY, queryFn: () => unwrap(api.GET('/api/auth/me')) });
}
