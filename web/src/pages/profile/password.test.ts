import { describe, expect, it } from 'vitest';
import { confirmationProblem, currentPassword } from './password';

describe('confirmationProblem', () => {
  it('accepts a confirmation that repeats the new password', () => {
    expect(confirmationProblem('correct horse', 'correct horse')).toBeNull();
  });

  it('refuses one that differs, even by a space or letter case', () => {
    expect(confirmationProblem('correct horse', 'correct horse ')).toBe(
      'The new password and its confirmation differ',
    );
    expect(confirmationProblem('Secret', 'secret')).not.toBeNull();
  });
});

describe('currentPassword', () => {
  it('is sent as typed for an account with a password, even empty', () => {
    expect(currentPassword('old', true)).toBe('old');
    expect(currentPassword('', true)).toBe('');
  });

  it('is left out for an account without one', () => {
    expect(currentPassword('anything', false)).toBeUndefined();
  });
});
