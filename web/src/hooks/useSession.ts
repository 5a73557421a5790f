import { useSyncExternalStore } from 'react';
import { useServices } from '../api/context';
import type { SessionSnapshot } from '../session/store';

/** The current session and the sign-in page's notice; re-renders when either changes. */
export function useSession(): SessionSnapshot {
  const { sessions } = useServices();
  return useSyncExternalStore(sessions.subscribe, sessions.getSnapshot);
}
