/**
 * The fields of a partial change that were sent: a field left out (undefined) keeps the current
 * value when the change is spread over it, while null is kept (it means "none").
 */
export function definedFields<T extends object>(value: Partial<T> | undefined): Partial<T> {
  if (value === undefined) return {};
  return Object.fromEntries(
    Object.entries(value).filter(([, field]) => field !== undefined),
  ) as Partial<T>;
}
