/**
 * The admin's account forms without React (Add user, Reset password): what the browser checks
 * itself, the body each sends, and the API's refusals put in words next to the field they name.
 *
 * The browser checks only what the API cannot see: an empty field (said in words rather than a
 * browser bubble) and a confirmation that differs from the password (the API gets only one of
 * them). The username and password rules stay the API's (`src/http/schemas.ts`), so the two
 * cannot drift apart; its validation messages ("must NOT have fewer than 6 characters") are
 * turned into sentences here.
 */
import type { ErrorDetail } from '../../api/errors';
import type { Role } from '../../hooks/useUsers';

/** How the person gets their first (or next) password: a one-time link, or one typed now. */
export type PasswordChoice = 'link' | 'password';

export interface PasswordDraft {
  readonly choice: PasswordChoice;
  readonly password: string;
  readonly confirmation: string;
}

export interface NewUserDraft extends PasswordDraft {
  readonly username: string;
  readonly role: Role;
}

/** A message per field of the form; a field without a problem is absent. */
export type Problems<F extends string> = Partial<Record<F, string>>;

export type PasswordField = 'password' | 'confirmation';
export type NewUserField = 'username' | PasswordField;

/** What is wrong with the password half before anything is sent; `{}` when nothing. */
export function passwordProblems(draft: PasswordDraft): Problems<PasswordField> {
  if (draft.choice === 'link') return {};
  if (draft.password === '') return { password: 'Enter a password, or choose to send a link' };
  if (draft.confirmation !== draft.password) {
    return { confirmation: 'The password and its confirmation differ' };
  }
  return {};
}

/** What is wrong with the Add user form before anything is sent; `{}` when nothing. */
export function newUserProblems(draft: NewUserDraft): Problems<NewUserField> {
  return {
    ...(draft.username.trim() === '' ? { username: 'Enter a username' } : {}),
    ...passwordProblems(draft),
  };
}

export const hasProblems = (problems: Problems<string>): boolean =>
  Object.values(problems).some((message) => message !== undefined);

/** `POST /api/users`'s body: no `password` when a link is to be made. */
export function newUserBody(draft: NewUserDraft): {
  username: string;
  role: Role;
  password?: string;
} {
  return {
    // A name pasted from a message often carries a space at either end.
    username: draft.username.trim(),
    role: draft.role,
    ...(draft.choice === 'password' ? { password: draft.password } : {}),
  };
}

/** `PUT /api/users/{username}/password`'s body. */
export function resetBody(draft: PasswordDraft): { password: string } | { link: true } {
  return draft.choice === 'password' ? { password: draft.password } : { link: true };
}

const USERNAME_RULE = 'Use 3 to 32 letters (A to Z), digits, or _ . - without spaces';

/** The validator's words for a length limit: "must NOT have fewer than 6 characters". */
function lengthLimit(message: string): { kind: 'fewer' | 'more'; count: number } | null {
  const match = /must NOT have (fewer|more) than (\d+) characters/.exec(message);
  if (match === null) return null;
  return { kind: match[1] === 'fewer' ? 'fewer' : 'more', count: Number(match[2]) };
}

/** One refused field of the API in a sentence a person reads. */
export function readableDetail(field: NewUserField, message: string): string {
  const limit = lengthLimit(message);
  if (field === 'username') {
    if (limit?.kind === 'fewer') return `Too short: ${USERNAME_RULE}`;
    if (limit?.kind === 'more') return `Too long: ${USERNAME_RULE}`;
    if (message.startsWith('must match pattern')) return USERNAME_RULE;
  } else if (limit !== null) {
    return limit.kind === 'fewer'
      ? `Too short: at least ${limit.count} characters`
      : `Too long: at most ${limit.count} characters`;
  }
  // Anything else (a rule the API gained since) is its own message, begun with a capital.
  return message.charAt(0).toUpperCase() + message.slice(1);
}

/**
 * The API's refusal placed under the fields it names (`body/username`, `body/password`), and
 * whether something is left to say above the button (a refusal naming no field of the form).
 * A taken name (409) names no field but belongs under the username.
 */
export function refusalByField<F extends NewUserField>(
  fields: readonly F[],
  error: { code: string; message: string; details: readonly ErrorDetail[] },
): { fields: Problems<F>; rest: boolean } {
  const placed: Problems<F> = {};
  let rest = error.details.length === 0;
  for (const detail of error.details) {
    const field = fields.find((name) => detail.path === `body/${name}`);
    if (field === undefined) rest = true;
    else placed[field] ??= readableDetail(field, detail.message);
  }
  const username = fields.find((name) => name === 'username');
  if (error.code === 'USERNAME_TAKEN' && username !== undefined) {
    placed[username] = error.message;
    return { fields: placed, rest: false };
  }
  return { fields: placed, rest };
}
