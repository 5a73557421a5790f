/**
 * The tickets pages' own logic, without React: statuses and their words, the list's place in the
 * URL, the length limit of a text, and one thread made of the description, the messages and the
 * status changes.
 */
import type { AnswerData } from '../../api/types';

export type Ticket = AnswerData<'/api/tickets/{id}', 'get'>;
export type TicketStatus = Ticket['status'];
export type Person = Ticket['owner'];
export type Message = Ticket['messages'][number];
export type StatusChange = Ticket['history'][number];

export const STATUSES: readonly TicketStatus[] = ['pending', 'in_progress', 'closed'];

export const STATUS_LABELS: Readonly<Record<TicketStatus, string>> = {
  pending: 'Pending',
  in_progress: 'In progress',
  closed: 'Closed',
};

export const isStatus = (value: string | null): value is TicketStatus =>
  value !== null && (STATUSES as readonly string[]).includes(value);

/** Tickets on one page of the list. */
export const PAGE_SIZE = 20;

/** Where the list is: a status filter (none: every status) and a page, from 1. */
export interface ListPlace {
  readonly status: TicketStatus | null;
  readonly page: number;
}

/** The list's place from the URL's query (`?status=closed&page=2`); anything else is ignored. */
export function listPlaceFrom(search: URLSearchParams): ListPlace {
  const status = search.get('status');
  const page = Number(search.get('page') ?? '1');
  return {
    status: isStatus(status) ? status : null,
    page: Number.isSafeInteger(page) && page >= 1 ? page : 1,
  };
}

/** The URL query of a place: the defaults (every status, page 1) are left out. */
export function searchOf(place: ListPlace): string {
  const search = new URLSearchParams();
  if (place.status !== null) search.set('status', place.status);
  if (place.page > 1) search.set('page', String(place.page));
  const query = search.toString();
  return query === '' ? '' : `?${query}`;
}

/** The API's query for a place: `offset` counts tickets, the URL counts pages. */
export function listQueryOf(place: ListPlace): {
  limit: number;
  offset: number;
  status?: TicketStatus;
} {
  return {
    limit: PAGE_SIZE,
    offset: (place.page - 1) * PAGE_SIZE,
    ...(place.status === null ? {} : { status: place.status }),
  };
}

/** How many pages `total` tickets fill (at least one, the empty one). */
export const pageCount = (total: number): number => Math.max(1, Math.ceil(total / PAGE_SIZE));

/**
 * The API's default `TICKET_MESSAGE_MAX_BYTES`. A panel may set another: the API's 413 then says
 * so, and the counter is only a guide.
 */
export const TEXT_MAX_BYTES = 65_536;

export const TITLE_MAX_CHARS = 200;

const encoder = new TextEncoder();

/** Bytes of UTF-8, what the API counts: `é` is 2, `🎮` 4. */
export const utf8Bytes = (text: string): number => encoder.encode(text).length;

/** A title's length as the API's schema counts it: UTF-16 code units. */
export const titleLength = (title: string): number => title.length;

/** The description that opened the ticket: the thread's first entry. */
export interface Opening {
  readonly at: string;
  readonly author: Person;
  readonly text: string;
}

/** One entry of a ticket's thread after the opening, oldest first. */
export type ThreadEntry =
  | {
      readonly kind: 'message';
      readonly key: string;
      readonly at: string;
      readonly author: Person;
      readonly text: string;
    }
  | {
      readonly kind: 'status';
      readonly key: string;
      readonly at: string;
      readonly by: Person;
      readonly from: TicketStatus;
      readonly to: TicketStatus;
    };

/** Status changes have no id: who, when and what together name one. */
const changeKey = (change: StatusChange): string =>
  `${change.at}|${change.by.username}|${change.from}|${change.to}`;

/** Messages seen so far plus a page of them, each once, oldest first (by time, then id). */
export function mergeMessages(seen: readonly Message[], page: readonly Message[]): Message[] {
  const byId = new Map<number, Message>();
  for (const message of [...seen, ...page]) byId.set(message.id, message);
  return [...byId.values()].sort((a, b) => compareTime(a.createdAt, b.createdAt) || a.id - b.id);
}

/** Status changes seen so far plus a page of them, each once, oldest first. */
export function mergeHistory(
  seen: readonly StatusChange[],
  page: readonly StatusChange[],
): StatusChange[] {
  const byKey = new Map<string, StatusChange>();
  for (const change of [...seen, ...page]) byKey.set(changeKey(change), change);
  return [...byKey.values()].sort((a, b) => compareTime(a.at, b.at));
}

const compareTime = (a: string, b: string): number => Date.parse(a) - Date.parse(b);

/**
 * The thread as read: the description first (it opened the ticket), then messages and status
 * changes by time; at the same instant a message comes before the change that followed it.
 */
export function threadOf(
  ticket: Pick<Ticket, 'owner' | 'createdAt' | 'description'>,
  messages: readonly Message[],
  history: readonly StatusChange[],
): { opening: Opening; entries: ThreadEntry[] } {
  const entries: ThreadEntry[] = [
    ...messages.map((message) => ({
      kind: 'message' as const,
      key: `message-${message.id}`,
      at: message.createdAt,
      author: message.author,
      text: message.text,
    })),
    ...history.map((change) => ({
      kind: 'status' as const,
      key: `status-${changeKey(change)}`,
      at: change.at,
      by: change.by,
      from: change.from,
      to: change.to,
    })),
  ];
  // Array.prototype.sort is stable: equal times keep messages before changes.
  entries.sort((a, b) => compareTime(a.at, b.at));
  return {
    opening: { at: ticket.createdAt, author: ticket.owner, text: ticket.description },
    entries,
  };
}

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** "12 Mar 2026, 14:05" in the reader's own language and time zone. */
export const formatTime = (iso: string): string => dateFormat.format(new Date(iso));
