/**
 * What every part of the egg reader shares: the limits, the one error an import throws, and the
 * checked readers of an egg's values. Each reader either answers the value in the shape asked
 * for or throws AppError VALIDATION_FAILED naming the field (`variables[2].env_variable`), as
 * egg.ts promises; none reads a field the egg does not own (`constructor`, `__proto__`).
 */
import { AppError } from '../errors.js';

/** Limits: far above what real eggs need, low enough that an import cannot exhaust anything. */
export const EGG_LIMITS = {
  /** The whole document, in characters (Pelican exports embed a base64 icon). */
  document: 2 * 1024 * 1024,
  name: 191,
  text: 65_536,
  command: 16_384,
  script: 262_144,
  value: 16_384,
  variables: 100,
  rules: 50,
  rule: 1000,
  images: 50,
  image: 255,
  commands: 20,
  configFiles: 50,
  replacements: 500,
  path: 1024,
  donePatterns: 50,
  features: 100,
} as const;

export const CONTROL = /\p{Cc}/u;

export type Json = Readonly<Record<string, unknown>>;

export function invalid(path: string, problem: string): AppError {
  return new AppError('VALIDATION_FAILED', `${path}: ${problem}`, {
    details: [{ path, message: problem }],
  });
}

/** `config.files["server.properties"]`: keys that are not identifiers are quoted as JSON. */
export const key = (path: string, name: string): string => `${path}[${JSON.stringify(name)}]`;

/** The parser's message, first line only: YAML adds a drawing of the spot. */
export function errorText(error: unknown): string {
  const message = error instanceof Error ? error.message : 'unreadable';
  return (message.split('\n')[0] ?? '').slice(0, 200);
}

/**
 * A field the eggs write as a JSON string (`"{\"done\": \"Ready\"}"`) or, in YAML and newer
 * Pelican exports, as the structure itself. Null when absent or empty.
 */
export function embedded(value: unknown, path: string): Json | unknown[] | null {
  let parsed = value;
  if (typeof value === 'string') {
    if (value.trim() === '') return null;
    try {
      parsed = JSON.parse(value);
    } catch (error) {
      throw invalid(path, `is not valid JSON: ${errorText(error)}`);
    }
  }
  if (parsed === undefined || parsed === null) return null;
  if (isRecord(parsed) || Array.isArray(parsed)) return parsed;
  throw invalid(path, 'must be a JSON object (as a string or a mapping)');
}

export function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A field of the egg's own, never one inherited from Object.prototype (`constructor`…). */
export function own(object: Json, name: string): unknown {
  return Object.hasOwn(object, name) ? object[name] : undefined;
}

/** A mapping; PHP writes an empty one as `[]`, so that is accepted as empty. */
export function record(value: unknown, path: string, problem = 'must be a mapping'): Json {
  if (isRecord(value)) return value;
  if (Array.isArray(value) && value.length === 0) return {};
  throw invalid(path, problem);
}

export function optionalRecord(value: unknown, path: string): Json | null {
  return value === undefined || value === null ? null : record(value, path);
}

/** A list; absent is empty, and so is `{}` (Symfony's YAML writes an empty list so). */
export function list(value: unknown, path: string): unknown[] {
  if (value === undefined || value === null) return [];
  if (Array.isArray(value)) return value;
  if (isRecord(value) && Object.keys(value).length === 0) return [];
  throw invalid(path, 'must be a list');
}

export function requiredText(value: unknown, path: string, max: number): string {
  if (value === undefined || value === null) throw invalid(path, 'is missing');
  const text = optionalText(value, path, max);
  if (text.trim() === '') throw invalid(path, 'is empty');
  return text;
}

export function optionalText(value: unknown, path: string, max: number): string {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw invalid(path, 'must be a text');
  if (value.length > max) throw invalid(path, `is longer than ${max} characters`);
  return value;
}

/** A value written into a file or the environment: text, or a number or boolean as text. */
export function scalar(value: unknown, path: string, max: number): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return optionalText(value, path, max);
}

/** A value for a message: a text quoted and cut short, anything else by its kind. */
export function describe(value: unknown): string {
  if (typeof value === 'string') {
    return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
  }
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return value === null ? 'null' : Array.isArray(value) ? 'a list' : 'a mapping';
}
