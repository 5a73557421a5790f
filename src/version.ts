/** The panel's version, as its package.json says: in the health answer, the API docs and logs. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PANEL_ROOT } from './paths.js';

export const VERSION = (
  JSON.parse(readFileSync(path.join(PANEL_ROOT, 'package.json'), 'utf8')) as {
    version: string;
  }
).version;
