import { describe, expect, it } from 'vitest';
import { createCommandHistory, historyKey } from './commandHistory';

function memoryStorage(initial: Record<string, string> = {}) {
  const values = new Map(Object.entries(initial));
  return {
    getItem: (key: string) => values.get(key) ?? null,
    setItem: (key: string, value: string) => void values.set(key, value),
    values,
  };
}

describe('command history', () => {
  it('walks back with up and forward with down, returning to the draft', () => {
    const history = createCommandHistory(memoryStorage(), 'mc');
    history.push('say one');
    history.push('say two');
    expect(history.up('half typed')).toBe('say two');
    expect(history.up('say two')).toBe('say one');
    expect(history.up('say one')).toBeNull();
    expect(history.down()).toBe('say two');
    expect(history.down()).toBe('half typed');
    expect(history.down()).toBeNull();
  });

  it('keeps each server its own, in storage, at most the limit, without repeats in a row', () => {
    const storage = memoryStorage();
    const mc = createCommandHistory(storage, 'mc', 3);
    for (const command of ['a', 'b', 'b', 'c', 'd']) mc.push(command);
    expect(mc.entries()).toEqual(['b', 'c', 'd']);
    expect(JSON.parse(storage.getItem(historyKey('mc')) ?? '')).toEqual(['b', 'c', 'd']);
    expect(createCommandHistory(storage, 'other').entries()).toEqual([]);
    // A reload finds them again.
    expect(createCommandHistory(storage, 'mc', 3).up('')).toBe('d');
  });

  it('starts empty from stored nonsense', () => {
    const storage = memoryStorage({ [historyKey('mc')]: '{"not":"a list"' });
    expect(createCommandHistory(storage, 'mc').entries()).toEqual([]);
    const mixed = memoryStorage({ [historyKey('mc')]: '["ok", 3, null]' });
    expect(createCommandHistory(mixed, 'mc').entries()).toEqual(['ok']);
  });
});
