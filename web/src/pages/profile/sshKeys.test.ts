import { describe, expect, it } from 'vitest';
import { algorithmName, commentOf } from './sshKeys';

describe('algorithmName', () => {
  it('names each accepted type as people do', () => {
    expect(algorithmName('ssh-ed25519')).toBe('Ed25519');
    expect(algorithmName('ecdsa-sha2-nistp384')).toBe('ECDSA P-384');
    expect(algorithmName('ssh-rsa')).toBe('RSA');
  });

  it('leaves an unknown type as it is', () => {
    expect(algorithmName('ssh-new')).toBe('ssh-new');
  });
});

describe('commentOf', () => {
  it("is a pasted line's comment", () => {
    expect(commentOf('ssh-ed25519 AAAAC3Nza alice@laptop\n')).toBe('alice@laptop');
    expect(commentOf('  ssh-rsa AAAAB3 work laptop 2024 ')).toBe('work laptop 2024');
  });

  it('is empty without a comment, or for several lines', () => {
    expect(commentOf('ssh-ed25519 AAAAC3Nza')).toBe('');
    expect(commentOf('')).toBe('');
    expect(commentOf('---- BEGIN SSH2 PUBLIC KEY ----\nComment: "x"\nAAAA\n---- END')).toBe('');
  });

  it('is cut to the longest name the API takes', () => {
    expect(commentOf(`ssh-ed25519 AAAA ${'x'.repeat(150)}`)).toHaveLength(100);
  });
});
