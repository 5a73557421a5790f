import { describe, expect, it } from 'vitest';
import { connectionIsUnencrypted } from './unencrypted';

const at = (url: string) => {
  const { protocol, hostname } = new URL(url);
  return connectionIsUnencrypted({ protocol, hostname });
};

describe('connectionIsUnencrypted', () => {
  it('flags plain http from another machine, by name or address', () => {
    expect(at('http://panel.example.org/sign-in')).toBe(true);
    expect(at('http://203.0.113.7:8000/sign-in')).toBe(true);
    expect(at('http://192.168.1.20:8000/register')).toBe(true);
    expect(at('http://[2001:db8::1]:8000/sign-in')).toBe(true);
    // A name that only starts like loopback is another machine.
    expect(at('http://127.0.0.1.example.org/sign-in')).toBe(true);
    expect(at('http://localhost.example.org/sign-in')).toBe(true);
  });

  it('leaves https alone, wherever it comes from', () => {
    expect(at('https://panel.example.org/sign-in')).toBe(false);
    expect(at('https://203.0.113.7:8443/sign-in')).toBe(false);
  });

  it('leaves loopback alone: the password never leaves the machine', () => {
    expect(at('http://localhost:8000/sign-in')).toBe(false);
    expect(at('http://LOCALHOST:8000/sign-in')).toBe(false);
    expect(at('http://panel.localhost:8000/sign-in')).toBe(false);
    expect(at('http://127.0.0.1:8000/sign-in')).toBe(false);
    expect(at('http://127.4.5.6:8000/sign-in')).toBe(false);
    expect(at('http://[::1]:8000/sign-in')).toBe(false);
  });
});
