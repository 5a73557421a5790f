import { describe, expect, it } from 'vitest';
import { sftpAddress } from './sftp';

describe('sftpAddress', () => {
  it('joins the user and the server with a dot, at the host and port', () => {
    expect(sftpAddress('alice', 'survival', 'panel.example', 2022)).toBe(
      'sftp://alice.survival@panel.example:2022',
    );
  });

  it('brackets an IPv6 address once', () => {
    expect(sftpAddress('a', 's', '::1', 2022)).toBe('sftp://a.s@[::1]:2022');
    expect(sftpAddress('a', 's', '[2001:db8::1]', 22)).toBe('sftp://a.s@[2001:db8::1]:22');
  });

  it('keeps the characters a username may have, and escapes any other', () => {
    expect(sftpAddress('Bob_1.x-y', 'lobby', '10.0.0.2', 2022)).toBe(
      'sftp://Bob_1.x-y.lobby@10.0.0.2:2022',
    );
    expect(sftpAddress('a', 'b@c', 'h', 1)).toBe('sftp://a.b%40c@h:1');
  });
});
