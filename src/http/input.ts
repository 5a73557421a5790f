/**
 * Refuses NUL characters anywhere in path parameters, query strings and JSON bodies (400).
 * PostgreSQL cannot store them in text, file paths cannot hold them, and no text a person types
 * contains one; refusing them everywhere keeps both databases alike and no query ever fails on
 * one. (Uploaded file bytes are not JSON and are not affected.)
 */
import { AppError } from '../errors.js';
import type { App } from './types.js';

function containsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (Array.isArray(value)) return value.some(containsNul);
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value).some(([key, item]) => key.includes('\u0000') || containsNul(item));
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
