/**
 * The one session of the page, observable by React (`useSyncExternalStore`). Signing out in one
 * tab signs out the others (the `storage` event).
 */
import { STORAGE_KEY, parseSession, type Session } from './session';

export interface SessionSnapshot {
  readonly session: Session | null;
  /** Why the last session ended or a sign-in failed, for the sign-in page; `null` when nothing to say. */
  readonly notice: string | null;
}

export interface SessionStore {
  readonly getSnapshot: () => SessionSnapshot;
  readonly subscribe: (listener: () => void) => () => void;
  readonly signIn: (session: Session) => void;
  readonly signOut: (notice?: string | null) => void;
  readonly setNotice: (notice: string | null) => void;
}

export function createSessionStore(
  storage: Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>,
  events?: Pick<Window, 'addEventListener'>,
): SessionStore {
  let snapshot: SessionSnapshot = {
    session: parseSession(storage.getItem(STORAGE_KEY)),
    notice: null,
  };
  const listeners = new Set<() => void>();
  const set = (next: SessionSnapshot) => {
    snapshot = next;
    for (const listener of listeners) listener();
  };
  events?.addEventListener('storage', (event) => {
    if (event.key !== STORAGE_KEY && event.key !== null) return;
    set({ session: parseSession(storage.getItem(STORAGE_KEY)), notice: null });
  });
  return {
    getSnapshot: () => snapshot,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    signIn(session) {
      storage.setItem(STORAGE_KEY, JSON.stringify(session));
      set({ session, notice: null });
    },
    signOut(notice = null) {
      storage.removeItem(STORAGE_KEY);
      set({ session: null, notice });
    },
    setNotice(notice) {
      set({ ...snapshot, notice });
    },
  };
}
