/**
 * The one check the password form makes itself: the confirmation must repeat the new password
 * (the API sees only one of them). Every other rule (length…) is the API's, shown as it says it.
 */
export function confirmationProblem(newPassword: string, confirmation: string): string | null {
  return newPassword === confirmation ? null : 'The new password and its confirmation differ';
}

/** A text field's value as the API expects an optional password: absent when the account has none. */
export function currentPassword(value: string, hasPassword: boolean): string | undefined {
  return hasPassword ? value : undefined;
}
