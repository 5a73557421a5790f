import { describe, expect, it } from 'vitest';
import { ApiError } from '../../api/errors';
import { identityErrors } from './confirmIdentity';

describe('identityErrors', () => {
  it('tells a wrong password under the password, a wrong code under the code', () => {
    const wrongPassword = new ApiError(403, 'WRONG_PASSWORD', 'The password is wrong');
    expect(identityErrors(wrongPassword)).toEqual({
      password: 'The password is wrong',
      code: undefined,
    });
    const wrongCode = new ApiError(401, 'INVALID_CREDENTIALS', 'The code is wrong');
    expect(identityErrors(wrongCode)).toEqual({ password: undefined, code: 'The code is wrong' });
  });

  it('tells a missing password or code under its field', () => {
    const missing = new ApiError(400, 'VALIDATION_FAILED', 'body/code: is required', null, [
      { path: 'body/code', message: 'is required' },
    ]);
    expect(identityErrors(missing)).toEqual({ password: undefined, code: 'is required' });
  });

  it('leaves any other failure to be told above the button', () => {
    const other = [
      new ApiError(403, 'SIGN_IN_AGAIN', 'Sign in again first'),
      new ApiError(400, 'VALIDATION_FAILED', 'name: must not be blank', null, [
        { path: 'body/name', message: 'must not be blank' },
      ]),
      new TypeError('Failed to fetch'),
      null,
    ];
    for (const error of other) {
      expect(identityErrors(error)).toEqual({ password: undefined, code: undefined });
    }
  });
});
