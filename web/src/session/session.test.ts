import { describe, expect, it, vi } from 'vitest';
import { parseCallbackFragment, parseSession, takeCallbackFragment } from './session';

const TOKEN = 'eyJhbGciOiJIUzI1NiJ9.e30.signature';

describe('parseSession', () => {
  it('reads back what was stored', () => {
    const session = { token: TOKEN, username: 'steve', role: 'admin' };
    expect(parseSession(JSON.stringify(session))).toEqual(session);
  });

  it('answers null for anything else, never throwing', () => {
    for (const stored of [
      null,
      '',
      '{',
      'null',
      '"text"',
      JSON.stringify({ token: '', username: 'a', role: 'user' }),
      JSON.stringify({ token: TOKEN, username: 'a', role: 'root' }),
      JSON.stringify({ token: TOKEN, role: 'user' }),
    ]) {
      expect(parseSession(stored)).toBeNull();
    }
  });
});

describe('parseCallbackFragment', () => {
  it('reads the token of a successful sign-in', () => {
    expect(
      parseCallbackFragment(
        `#access_token=${TOKEN}&token_type=bearer&username=St%C3%A9ve&role=user`,
      ),
    ).toEqual({ kind: 'signed-in', session: { token: TOKEN, username: 'Stéve', role: 'user' } });
  });

  it('reads a banned account as banned', () => {
    const callback = parseCallbackFragment(`#access_token=${TOKEN}&username=x&role=banned`);
    expect(callback).toEqual({
      kind: 'signed-in',
      session: { token: TOKEN, username: 'x', role: 'banned' },
    });
  });

  it('turns each error into a sentence', () => {
    expect(parseCallbackFragment('#error=registration_closed')).toEqual({
      kind: 'failed',
      message: 'Registration is closed on this panel, and no account is linked to that sign-in',
    });
    expect(parseCallbackFragment('#error=something_new')).toEqual({
      kind: 'failed',
      message: 'Sign-in failed (something_new)',
    });
  });

  it('refuses an incomplete answer', () => {
    expect(parseCallbackFragment(`#access_token=${TOKEN}&role=user`)?.kind).toBe('failed');
    expect(parseCallbackFragment(`#access_token=${TOKEN}&username=a&role=root`)?.kind).toBe(
      'failed',
    );
  });

  it('leaves other fragments alone', () => {
    expect(parseCallbackFragment('')).toBeNull();
    expect(parseCallbackFragment('#')).toBeNull();
    expect(parseCallbackFragment('#section-2')).toBeNull();
  });
});

describe('takeCallbackFragment', () => {
  const place = (hash: string) => ({
    location: { hash, pathname: '/sign-in', search: '?x=1' },
    history: { state: { key: 'k' }, replaceState: vi.fn() },
  });

  it('removes the token from the address bar by replacing the history entry', () => {
    const at = place(`#access_token=${TOKEN}&token_type=bearer&username=a&role=admin`);
    expect(takeCallbackFragment(at)?.kind).toBe('signed-in');
    expect(at.history.replaceState).toHaveBeenCalledExactlyOnceWith(
      { key: 'k' },
      '',
      '/sign-in?x=1',
    );
  });

  it('removes an error fragment too', () => {
    const at = place('#error=access_denied');
    expect(takeCallbackFragment(at)?.kind).toBe('failed');
    expect(at.history.replaceState).toHaveBeenCalledOnce();
  });

  it('does not touch the history for other fragments', () => {
    const at = place('#top');
    expect(takeCallbackFragment(at)).toBeNull();
    expect(at.history.replaceState).not.toHaveBeenCalled();
  });
});
