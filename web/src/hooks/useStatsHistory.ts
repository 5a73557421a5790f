import { useCallback, useEffect, useSyncExternalStore } from 'react';
import { append, type History, type Reading } from '../pages/server/stats/history';
import { useServerStats } from './useServer';

/**
 * Each server's window, kept for the life of the page: back on the Stats tab, the charts show
 * what was read before (with a gap for the time the tab was elsewhere).
 */
const windows = new Map<string, History>();
const listeners = new Set<() => void>();
const EMPTY: History = [];

function record(server: string, reading: Reading) {
  const before = windows.get(server) ?? EMPTY;
  const after = append(before, reading);
  if (after === before) return;
  windows.set(server, after);
  for (const listener of listeners) listener();
}

function subscribe(listener: () => void) {
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
  };
}

/**
 * The polled stats (the same query as the server page's, so no extra request) and the rolling
 * window of CPU and memory built from each answer.
 */
export function useStatsHistory(server: string) {
  const stats = useServerStats(server);
  const history = useSyncExternalStore(
    subscribe,
    useCallback(() => windows.get(server) ?? EMPTY, [server]),
  );
  const { data, dataUpdatedAt } = stats;

  useEffect(() => {
    if (data === undefined) return;
    record(server, {
      at: dataUpdatedAt,
      status: data.status,
      cpuPercent: data.cpu.percent,
      memoryBytes: data.memory.bytes,
    });
  }, [server, data, dataUpdatedAt]);

  return { stats, history };
}
