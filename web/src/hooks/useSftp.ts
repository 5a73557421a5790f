import { useQuery } from '@tanstack/react-query';
import { unwrapData } from '../api/client';
import { useServices } from '../api/context';
import type { AnswerData } from '../api/types';

const SFTP_KEY = ['sftp'] as const;

/** Whether the panel's SFTP server runs, its port and its host key's fingerprint. */
export type SftpInfo = AnswerData<'/api/sftp', 'get'>;

/** Where the panel's SFTP server listens, if it runs: it changes only with the panel's restart. */
export function useSftp() {
  const { api } = useServices();
  return useQuery({
    queryKey: SFTP_KEY,
    queryFn: async () => unwrapData(api.GET('/api/sftp')),
    staleTime: Infinity,
  });
}
