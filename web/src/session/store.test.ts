import { describe, expect, it, vi } from 'vitest';
import { STORAGE_KEY } from './session';
import { createSessionStore } from './store';

function memoryStorage(initial: Record<string, string> = {}) {
  const items = new Map(Object.entries(initial));
  return {
    items,
    getItem: (key: string) => items.get(key) ?? null,
    setItem: (key: string, value: string) => items.set(key, value),
    removeItem: (key: string) => items.delete(key),
  };
}

const session = { token: 'a.b.c', username: 'alex', role: 'user' } as const;

describe('the session store', () => {
  it('starts from what localStorage holds', () => {
    const storage = memoryStorage({ [STORAGE_KEY]: JSON.stringify(session) });
    expect(createSessionStore(storage).getSnapshot().session).toEqual(session);
    expect(createSessionStore(memoryStorage()).getSnapshot().session).toBeNull();
  });

  it('keeps a sign-in in localStorage and forgets it at sign-out, telling listeners', () => {
    const storage = memoryStorage();
    const store = createSessionStore(storage);
    const listener = vi.fn();
    store.subscribe(listener);
    store.signIn(session);
    expect(JSON.parse(storage.items.get(STORAGE_KEY) ?? '')).toEqual(session);
    store.signOut('Your session has ended; sign in again');
    expect(storage.items.has(STORAGE_KEY)).toBe(false);
    expect(store.getSnapshot()).toEqual({
      session: null,
      notice: 'Your session has ended; sign in again',
    });
    expect(listener).toHaveBeenCalledTimes(2);
  });

  it('follows a sign-out in another tab', () => {
    const storage = memoryStorage({ [STORAGE_KEY]: JSON.stringify(session) });
    let onStorage: ((event: { key: string | null }) => void) | undefined;
    const store = createSessionStore(storage, {
      addEventListener: (_type: string, listener: (event: { key: string | null }) => void) => {
        onStorage = listener;
      },
    } as unknown as Window);
    storage.items.delete(STORAGE_KEY);
    onStorage?.({ key: STORAGE_KEY });
    expect(store.getSnapshot().session).toBeNull();
  });
});
