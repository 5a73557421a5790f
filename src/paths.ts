/**
 * The panel's own folder, the one holding its package.json, found from this module's location:
 * the same answer from `src/` (tests), `dist/` (tsc's output) and `dist/panel.mjs` (the bundle
 * `npm start` runs), whatever their depth.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

function panelRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

export const PANEL_ROOT = panelRoot(path.dirname(fileURLToPath(import.meta.url)));
