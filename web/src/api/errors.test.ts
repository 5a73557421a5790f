import { describe, expect, it } from 'vitest';
import {
  ApiError,
  apiErrorFrom,
  errorMessage,
  fieldError,
  formatWait,
  parseRetryAfter,
} from './errors';

const headers = (entries: Record<string, string> = {}) => new Headers(entries);

describe('apiErrorFrom', () => {
  it("keeps the API's message and code", () => {
    const error = apiErrorFrom(401, headers(), {
      message: 'Invalid username or password',
      code: 'INVALID_CREDENTIALS',
      statusCode: 401,
    });
    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(401);
    expect(error.code).toBe('INVALID_CREDENTIALS');
    expect(errorMessage(error)).toBe('Invalid username or password');
  });

  it('adds the wait of a 429 from Retry-After', () => {
    const error = apiErrorFrom(429, headers({ 'Retry-After': '840' }), {
      message: 'Too many failed logins; try again later',
      code: 'RATE_LIMITED',
    });
    expect(error.retryAfterSeconds).toBe(840);
    expect(errorMessage(error)).toBe('Too many failed logins; try again later (wait 14 minutes)');
  });

  it('ignores Retry-After on other statuses', () => {
    const error = apiErrorFrom(503, headers({ 'Retry-After': '5' }), { message: 'Unavailable' });
    expect(errorMessage(error)).toBe('Unavailable');
  });

  it('keeps the fields a validation failure names, and drops what is not one', () => {
    const error = apiErrorFrom(400, headers(), {
      message: 'body/stopTimeoutSeconds: must be <= 3600',
      code: 'VALIDATION_FAILED',
      details: [{ path: 'body/stopTimeoutSeconds', message: 'must be <= 3600' }, { path: 3 }, null],
    });
    expect(error.details).toEqual([
      { path: 'body/stopTimeoutSeconds', message: 'must be <= 3600' },
    ]);
    expect(apiErrorFrom(400, headers(), { message: 'No', details: 'x' }).details).toEqual([]);
  });

  it('says what happened when the body is not the error envelope', () => {
    for (const body of [null, 'text', { message: 42 }, { message: '' }, []]) {
      const error = apiErrorFrom(502, headers(), body);
      expect(error.code).toBe('HTTP_502');
      expect(error.message).toBe('The panel answered 502 without saying why');
    }
  });
});

describe('errorMessage', () => {
  it('tells a network failure from a bug in the page', () => {
    expect(errorMessage(new TypeError('Failed to fetch'))).toBe(
      'The panel cannot be reached; check the connection',
    );
    expect(errorMessage(new Error('boom'))).toBe('Something went wrong in the page; reload it');
  });
});

describe('parseRetryAfter', () => {
  it('reads seconds and HTTP dates', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:01:30 GMT', now)).toBe(90);
    expect(parseRetryAfter('Wed, 31 Dec 2025 23:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter(null, now)).toBeNull();
    expect(parseRetryAfter('soon', now)).toBeNull();
    expect(parseRetryAfter('-5', now)).toBeNull();
  });
});

describe('formatWait', () => {
  it('rounds up to a unit a person reads', () => {
    expect(formatWait(0)).toBe('1 second');
    expect(formatWait(1)).toBe('1 second');
    expect(formatWait(59)).toBe('59 seconds');
    expect(formatWait(60)).toBe('1 minute');
    expect(formatWait(61)).toBe('2 minutes');
    expect(formatWait(900)).toBe('15 minutes');
    expect(formatWait(3600)).toBe('1 hour');
    expect(formatWait(7201)).toBe('3 hours');
  });
});

describe('fieldError', () => {
  const refused = new ApiError(400, 'VALIDATION_FAILED', 'name: must not be blank', null, [
    { path: 'body/name', message: 'must not be blank' },
    { path: 'body/servers/0', message: 'you have no server named "x"' },
  ]);

  it("is the API's word on that field of the body, or on an item of it", () => {
    expect(fieldError(refused, 'name')).toBe('must not be blank');
    expect(fieldError(refused, 'servers')).toBe('you have no server named "x"');
  });

  it('is nothing for a field the API did not name, or a failure that is not an answer', () => {
    expect(fieldError(refused, 'expiresAt')).toBeUndefined();
    expect(
      fieldError(new ApiError(403, 'WRONG_PASSWORD', 'The password is wrong'), 'password'),
    ).toBeUndefined();
    expect(fieldError(new TypeError('Failed to fetch'), 'name')).toBeUndefined();
    expect(fieldError(null, 'name')).toBeUndefined();
  });
});
