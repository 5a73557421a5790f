/**
 * Cursors of a ticket's paged lists, its messages and its status history. A cursor is opaque to
 * clients (so the key behind it may change) and names its list, its ticket and the id of the
 * oldest entry a page showed; the next page holds the entries stored before that one. Being a
 * keyset and not an offset, entries added meanwhile never shift or repeat a page.
 */
export type CursorList = 'messages' | 'history';

const TAG: Readonly<Record<CursorList, string>> = { messages: 'm', history: 'h' };
const MAX_ID = 2_147_483_647;

export function encodeCursor(list: CursorList, ticketId: number, beforeId: number): string {
  return Buffer.from(`${TAG[list]}.${ticketId}.${beforeId}`, 'utf8').toString('base64url');
}

/**
 * The id a cursor continues before; `undefined` when `cursor` was not made by
 * {@link encodeCursor} for this list of this ticket.
 */
export function decodeCursor(
  list: CursorList,
  ticketId: number,
  cursor: string,
): number | undefined {
  const match = /^([a-z])\.([1-9]\d{0,9})\.([1-9]\d{0,9})$/.exec(
    Buffer.from(cursor, 'base64url').toString('utf8'),
  );
  if (match?.[1] !== TAG[list] || Number(match[2]) !== ticketId) return undefined;
  const beforeId = Number(match[3]);
  return beforeId <= MAX_ID ? beforeId : undefined;
}
