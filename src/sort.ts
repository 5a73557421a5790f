/**
 * Code-point order, the same on every database and locale. Lists are sorted with it in code
 * rather than by the database, whose collation may order `.`, `_` and `-` differently.
 */
export const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
