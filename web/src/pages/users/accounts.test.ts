import { describe, expect, it } from 'vitest';
import {
  hasProblems,
  newUserBody,
  newUserProblems,
  passwordProblems,
  readableDetail,
  refusalByField,
  resetBody,
  type NewUserDraft,
} from './accounts';

const draft: NewUserDraft = {
  username: 'alice',
  role: 'user',
  choice: 'link',
  password: '',
  confirmation: '',
};

describe('the form rules', () => {
  it('asks nothing of the password half when a link is to be made', () => {
    expect(passwordProblems({ choice: 'link', password: 'x', confirmation: 'y' })).toEqual({});
    expect(hasProblems(newUserProblems(draft))).toBe(false);
  });

  it('asks for a password, then for the same one twice', () => {
    const typed = { ...draft, choice: 'password' } as const;
    expect(newUserProblems(typed)).toEqual({
      password: 'Enter a password, or choose to send a link',
    });
    expect(newUserProblems({ ...typed, password: 'secret1', confirmation: 'secret2' })).toEqual({
      confirmation: 'The password and its confirmation differ',
    });
    expect(
      hasProblems(newUserProblems({ ...typed, password: 'secret1', confirmation: 'secret1' })),
    ).toBe(false);
  });

  it('asks for a username, spaces alone being none', () => {
    expect(newUserProblems({ ...draft, username: '  ' })).toEqual({ username: 'Enter a username' });
  });

  it('leaves the length and the characters to the API', () => {
    const typed = { ...draft, username: 'a b', choice: 'password' as const };
    expect(newUserProblems({ ...typed, password: '1', confirmation: '1' })).toEqual({});
  });
});

describe('the bodies sent', () => {
  it('sends no password with a link, and the name without the spaces around it', () => {
    expect(newUserBody({ ...draft, username: ' alice ', password: 'ignored' })).toEqual({
      username: 'alice',
      role: 'user',
    });
    expect(
      newUserBody({ ...draft, role: 'support', choice: 'password', password: 'p4ss w0rd ' }),
    ).toEqual({ username: 'alice', role: 'support', password: 'p4ss w0rd ' });
  });

  it('asks for a link or sets the password', () => {
    expect(resetBody({ choice: 'link', password: 'x', confirmation: 'x' })).toEqual({ link: true });
    expect(resetBody({ choice: 'password', password: 'secret', confirmation: 'secret' })).toEqual({
      password: 'secret',
    });
  });
});

describe("the API's refusals in words", () => {
  it('says the username rule instead of a pattern', () => {
    expect(readableDetail('username', 'must match pattern "^[A-Za-z0-9_.-]+$"')).toBe(
      'Use 3 to 32 letters (A to Z), digits, or _ . - without spaces',
    );
    expect(readableDetail('username', 'must NOT have fewer than 3 characters')).toMatch(
      /^Too short: Use 3 to 32/,
    );
    expect(readableDetail('username', 'must NOT have more than 32 characters')).toMatch(
      /^Too long: /,
    );
  });

  it('says a password length in characters', () => {
    expect(readableDetail('password', 'must NOT have fewer than 6 characters')).toBe(
      'Too short: at least 6 characters',
    );
    expect(readableDetail('password', 'must NOT have more than 1024 characters')).toBe(
      'Too long: at most 1024 characters',
    );
  });

  it('keeps a message it does not know, with a capital', () => {
    expect(readableDetail('password', 'is too common')).toBe('Is too common');
  });

  it('places each detail under its field, and what names none above the button', () => {
    const refused = refusalByField(['username', 'password'], {
      code: 'VALIDATION_FAILED',
      message: '…',
      details: [
        { path: 'body/username', message: 'must match pattern "x"' },
        { path: 'body/password', message: 'must NOT have fewer than 6 characters' },
      ],
    });
    expect(refused.rest).toBe(false);
    expect(refused.fields.password).toBe('Too short: at least 6 characters');
    expect(refused.fields.username).toMatch(/^Use 3 to 32/);

    const other = refusalByField(['password'], {
      code: 'VALIDATION_FAILED',
      message: 'body/role: must be one of admin, user',
      details: [{ path: 'body/role', message: 'must be one of admin, user' }],
    });
    expect(other).toEqual({ fields: {}, rest: true });
    expect(
      refusalByField(['password'], { code: 'NOT_FOUND', message: 'User not found', details: [] }),
    ).toEqual({ fields: {}, rest: true });
  });

  it('puts a taken name under the username', () => {
    expect(
      refusalByField(['username', 'password'], {
        code: 'USERNAME_TAKEN',
        message: 'That username is taken',
        details: [],
      }),
    ).toEqual({ fields: { username: 'That username is taken' }, rest: false });
  });
});
