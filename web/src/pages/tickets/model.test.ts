import { describe, expect, it } from 'vitest';
import {
  listPlaceFrom,
  listQueryOf,
  mergeHistory,
  mergeMessages,
  pageCount,
  PAGE_SIZE,
  searchOf,
  threadOf,
  utf8Bytes,
  type Message,
  type StatusChange,
} from './model';

const alice = { username: 'alice', role: 'user', deleted: false } as const;
const sam = { username: 'sam', role: 'support', deleted: false } as const;

const message = (id: number, at: string, text = `m${id}`): Message => ({
  id,
  author: id % 2 === 0 ? sam : alice,
  text,
  createdAt: at,
});

const change = (at: string, from: StatusChange['from'], to: StatusChange['to']): StatusChange => ({
  by: sam,
  from,
  to,
  at,
});

describe('the list in the URL', () => {
  it('reads a status and a page, and ignores what it does not know', () => {
    expect(listPlaceFrom(new URLSearchParams('status=closed&page=3'))).toEqual({
      status: 'closed',
      page: 3,
    });
    expect(listPlaceFrom(new URLSearchParams('status=open&page=-2'))).toEqual({
      status: null,
      page: 1,
    });
    expect(listPlaceFrom(new URLSearchParams('page=1.5'))).toEqual({ status: null, page: 1 });
    expect(listPlaceFrom(new URLSearchParams(''))).toEqual({ status: null, page: 1 });
  });

  it('writes only what differs from the defaults, so the plain list has a plain URL', () => {
    expect(searchOf({ status: null, page: 1 })).toBe('');
    expect(searchOf({ status: 'in_progress', page: 1 })).toBe('?status=in_progress');
    expect(searchOf({ status: 'pending', page: 2 })).toBe('?status=pending&page=2');
    const place = { status: 'closed', page: 4 } as const;
    expect(listPlaceFrom(new URLSearchParams(searchOf(place)))).toEqual(place);
  });

  it('turns a page into the offset the API pages by', () => {
    expect(listQueryOf({ status: null, page: 1 })).toEqual({ limit: PAGE_SIZE, offset: 0 });
    expect(listQueryOf({ status: 'pending', page: 3 })).toEqual({
      limit: PAGE_SIZE,
      offset: 2 * PAGE_SIZE,
      status: 'pending',
    });
  });

  it('counts pages, one even when empty', () => {
    expect(pageCount(0)).toBe(1);
    expect(pageCount(PAGE_SIZE)).toBe(1);
    expect(pageCount(PAGE_SIZE + 1)).toBe(2);
  });
});

describe('utf8Bytes', () => {
  it('counts bytes as the API does, not characters', () => {
    expect(utf8Bytes('abc')).toBe(3);
    expect(utf8Bytes('é')).toBe(2);
    expect(utf8Bytes('🎮')).toBe(4);
    expect(utf8Bytes('a\nb')).toBe(3);
  });
});

describe('the thread', () => {
  it('merges pages once each, oldest first', () => {
    const newest = [message(3, '2026-01-01T10:03:00Z'), message(4, '2026-01-01T10:04:00Z')];
    const older = [message(1, '2026-01-01T10:01:00Z'), message(3, '2026-01-01T10:03:00Z')];
    expect(mergeMessages(newest, older).map((m) => m.id)).toEqual([1, 3, 4]);
    // Same instant: the id, which follows the order they were stored, decides.
    expect(
      mergeMessages([message(9, '2026-01-01T10:00:00Z')], [message(8, '2026-01-01T10:00:00Z')]).map(
        (m) => m.id,
      ),
    ).toEqual([8, 9]);
    const a = change('2026-01-01T10:02:00Z', 'pending', 'in_progress');
    const b = change('2026-01-01T10:05:00Z', 'in_progress', 'closed');
    expect(mergeHistory([b], [a, b])).toEqual([a, b]);
  });

  it('opens with the description, then interleaves messages and status changes by time', () => {
    const { opening, entries } = threadOf(
      { owner: alice, createdAt: '2026-01-01T10:00:00Z', description: 'It crashes' },
      [message(2, '2026-01-01T10:01:00Z'), message(3, '2026-01-01T10:03:00Z')],
      [
        change('2026-01-01T10:02:00Z', 'pending', 'in_progress'),
        change('2026-01-01T10:03:00Z', 'in_progress', 'closed'),
      ],
    );
    expect(opening).toEqual({
      at: '2026-01-01T10:00:00Z',
      author: alice,
      text: 'It crashes',
    });
    expect(entries.map((entry) => entry.kind)).toEqual(['message', 'status', 'message', 'status']);
    expect(new Set(entries.map((entry) => entry.key)).size).toBe(entries.length);
  });
});
