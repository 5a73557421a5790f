/**
 * The commands typed into one server's console, newest last, kept in the browser (localStorage,
 * at most `limit`), walked with ↑ and ↓ as in a shell: ↑ goes back, ↓ forward, and past the
 * newest the line being typed before the walk comes back.
 */
export const HISTORY_LIMIT = 100;

export const historyKey = (server: string): string => `game-panel.console-history.${server}`;

export interface CommandHistory {
  /** Remembers a sent command (not twice in a row) and ends the walk. */
  push(command: string): void;
  /** The older command to show, or `null` at the oldest; `draft` is what the box holds now. */
  up(draft: string): string | null;
  /** The newer command to show (the draft past the newest), or `null` when not walking. */
  down(): string | null;
  /** Everything remembered, oldest first. */
  entries(): readonly string[];
}

type Store = Pick<Storage, 'getItem' | 'setItem'>;

function load(storage: Store, key: string, limit: number): string[] {
  try {
    const value: unknown = JSON.parse(storage.getItem(key) ?? '[]');
    return Array.isArray(value)
      ? value.filter((entry): entry is string => typeof entry === 'string').slice(-limit)
      : [];
  } catch {
    return [];
  }
}

export function createCommandHistory(
  storage: Store,
  server: string,
  limit: number = HISTORY_LIMIT,
): CommandHistory {
  const key = historyKey(server);
  let entries = load(storage, key, limit);
  /** Where the walk is: `entries.length` when not walking. */
  let cursor = entries.length;
  let draft = '';

  return {
    push(command) {
      // Another tab may have added some since: start from what is stored.
      entries = load(storage, key, limit);
      if (command !== '' && entries[entries.length - 1] !== command) {
        entries = [...entries, command].slice(-limit);
        try {
          storage.setItem(key, JSON.stringify(entries));
        } catch {
          // Storage full or refused: the history lasts as long as the page.
        }
      }
      cursor = entries.length;
      draft = '';
    },
    up(current) {
      if (cursor === entries.length) draft = current;
      if (cursor === 0) return null;
      cursor -= 1;
      return entries[cursor] ?? null;
    },
    down() {
      if (cursor >= entries.length) return null;
      cursor += 1;
      return cursor === entries.length ? draft : (entries[cursor] ?? null);
    },
    entries: () => entries,
  };
}
