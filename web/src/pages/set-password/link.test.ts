import { describe, expect, it, vi } from 'vitest';
import { forgetFragment, linkTokenFrom } from './link';

describe('linkTokenFrom', () => {
  it('reads the token of the fragment, with or without its #', () => {
    expect(linkTokenFrom('#token=abc_DEF-123')).toBe('abc_DEF-123');
    expect(linkTokenFrom('token=abc')).toBe('abc');
    expect(linkTokenFrom('#other=1&token=abc&more=2')).toBe('abc');
  });

  it('decodes percent-escapes but keeps a + as it is', () => {
    expect(linkTokenFrom('#token=a%2Fb+c%3D')).toBe('a/b+c=');
  });

  it('answers null without a token', () => {
    expect(linkTokenFrom('')).toBeNull();
    expect(linkTokenFrom('#')).toBeNull();
    expect(linkTokenFrom('#token=')).toBeNull();
    expect(linkTokenFrom('#token=%20')).toBeNull();
    expect(linkTokenFrom('#tokens=abc')).toBeNull();
    expect(linkTokenFrom('#access_token=abc')).toBeNull();
    expect(linkTokenFrom('#token=%E0%A4%A')).toBeNull();
  });
});

describe('forgetFragment', () => {
  it('replaces the entry with the address without its fragment, keeping the state', () => {
    const replaceState = vi.fn();
    const state = { key: 'router' };
    forgetFragment({
      location: { hash: '#token=abc', pathname: '/set-password', search: '?x=1' },
      history: { replaceState, state },
    });
    expect(replaceState).toHaveBeenCalledWith(state, '', '/set-password?x=1');
  });

  it('leaves an address without a fragment alone', () => {
    const replaceState = vi.fn();
    forgetFragment({
      location: { hash: '', pathname: '/set-password', search: '' },
      history: { replaceState, state: null },
    });
    expect(replaceState).not.toHaveBeenCalled();
  });
});
