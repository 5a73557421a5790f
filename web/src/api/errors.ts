/**
 * Errors as the person sees them. The API answers every failure as `{ message, code, statusCode }`
 * (docs/api.md); the UI shows that message as it is, adding only the wait of a 429 when the API
 * gives one in `Retry-After`.
 */

/** One refused field of a validation failure: `body/<field>` and what is wrong with it. */
export interface ErrorDetail {
  readonly path: string;
  readonly message: string;
}

/** A refused or failed API call, with the API's own message. */
export class ApiError extends Error {
  override readonly name = 'ApiError';

  constructor(
    readonly status: number,
    /** The API's error code (`INVALID_CREDENTIALS`, `BANNED`…), or `HTTP_<status>` without one. */
    readonly code: string,
    message: string,
    /** Seconds to wait before trying again, from `Retry-After`. */
    readonly retryAfterSeconds: number | null = null,
    /** A validation failure's fields (`details` of a 400), when the API names them. */
    readonly details: readonly ErrorDetail[] = [],
  ) {
    super(message);
  }
}

/**
 * What the API said is wrong with the body's `field` (a 400's detail at `body/<field>`, or under
 * it), to show next to that field; `undefined` when it named no such field.
 */
export function fieldError(error: unknown, field: string): string | undefined {
  if (!(error instanceof ApiError)) return undefined;
  return error.details.find((detail) => detail.path.startsWith(`body/${field}`))?.message;
}

function field(body: unknown, name: string): unknown {
  return typeof body === 'object' && body !== null
    ? (body as Record<string, unknown>)[name]
    : undefined;
}

/** Seconds from a `Retry-After` header (delta-seconds or an HTTP date), or `null`. */
export function parseRetryAfter(header: string | null, now: Date = new Date()): number | null {
  if (header === null || header.trim() === '') return null;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value);
  // An HTTP date names its weekday and month; `Date.parse` would also take a bare "-5".
  if (!/[A-Za-z]/.test(value)) return null;
  const date = Date.parse(value);
  if (Number.isNaN(date)) return null;
  return Math.max(0, Math.ceil((date - now.getTime()) / 1000));
}

function detailsOf(body: unknown): ErrorDetail[] {
  const details = field(body, 'details');
  if (!Array.isArray(details)) return [];
  return details.flatMap((detail: unknown) => {
    const path = field(detail, 'path');
    const message = field(detail, 'message');
    return typeof path === 'string' && typeof message === 'string' ? [{ path, message }] : [];
  });
}

/** The error a response with this status, headers and parsed body stands for. */
export function apiErrorFrom(status: number, headers: Headers, body: unknown): ApiError {
  const message = field(body, 'message');
  const code = field(body, 'code');
  return new ApiError(
    status,
    typeof code === 'string' ? code : `HTTP_${status}`,
    typeof message === 'string' && message !== ''
      ? message
      : `The panel answered ${status} without saying why`,
    status === 429 ? parseRetryAfter(headers.get('Retry-After')) : null,
    detailsOf(body),
  );
}

/** "45 seconds", "1 minute", "15 minutes", "2 hours": a wait, rounded up. */
export function formatWait(seconds: number): string {
  const plural = (count: number, unit: string) => `${count} ${unit}${count === 1 ? '' : 's'}`;
  if (seconds < 60) return plural(Math.max(1, Math.ceil(seconds)), 'second');
  if (seconds < 3600) return plural(Math.ceil(seconds / 60), 'minute');
  return plural(Math.ceil(seconds / 3600), 'hour');
}

/** What to show for any failure: the API's message, or what went wrong on the way to it. */
export function errorMessage(error: unknown): string {
  if (error instanceof ApiError) {
    return error.retryAfterSeconds === null
      ? error.message
      : `${error.message} (wait ${formatWait(error.retryAfterSeconds)})`;
  }
  // fetch rejects with a TypeError when the request never got an answer.
  if (error instanceof TypeError) return 'The panel cannot be reached; check the connection';
  return 'Something went wrong in the page; reload it';
}
