/**
 * Refuses NUL characters anywhere in path parameters, query strings and JSON bodies (400).
 * PostgreSQL cannot store them in text, file paths cannot hold them, and no text a person types
 * contains one; refusing them everywhere keeps both databases alike and no query ever fails on
 * one. (Uploaded file bytes are not JSON and are not affected.)
 */
import { AppError } from '../errors.js';
import type { App } from './types.js';

/** Walks the value with an explicit stack: a body nested 100,000 deep must not overflow ours. */
function containsNul(root: unknown): boolean {
  const pending: unknown[] = [root];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value === 'string') {
      if (value.includes('\u0000')) return true;
    } else if (Array.isArray(value)) {
      for (const item of value as unknown[]) pending.push(item);
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, item] of Object.entries(value)) {
        if (key.includes('\u0000')) return true;
        pending.push(item);
      }
    }
  }
  return false;
}

export function registerInputGuards(app: App): void {
  app.addHook('preValidation', (request, _reply, done) => {
    if (containsNul(request.params) || containsNul(request.query) || containsNul(request.body)) {
      done(new AppError('VALIDATION_FAILED', 'Text may not contain NUL characters'));
    } else done();
  });
}
