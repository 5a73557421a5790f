/**
 * Confirming one's identity before a key is made (an API key, an SSH key), without React: where
 * the API's refusal of the password or the code is told. docs/security.md.
 */
import { ApiError, fieldError } from '../../api/errors';

/** What is wrong with the password and the code, each shown next to its field. */
export interface IdentityErrors {
  readonly password: string | undefined;
  readonly code: string | undefined;
}

/**
 * A missing or malformed password or code (a 400 naming it), a wrong password (403
 * WRONG_PASSWORD) and a wrong code (401 INVALID_CREDENTIALS) belong next to their field, not
 * above the button; any other failure is neither's.
 */
export function identityErrors(error: unknown): IdentityErrors {
  const code = error instanceof ApiError ? error.code : undefined;
  const message = error instanceof Error ? error.message : undefined;
  return {
    password: fieldError(error, 'password') ?? (code === 'WRONG_PASSWORD' ? message : undefined),
    code: fieldError(error, 'code') ?? (code === 'INVALID_CREDENTIALS' ? message : undefined),
  };
}
