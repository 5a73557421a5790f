/**
 * docs/deploy.md as the tests run it: its configuration blocks, read from between their
 * `<!-- name:begin -->` and `<!-- name:end -->` markers (test/deploy-docs.test.ts, and the
 * journey web/e2e/proxy.e2e.ts).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';

/** The fenced block of `language` between the `marker` markers, exactly as written. */
export function blockOfDeployDoc(marker: string, language: string): string {
  const doc = readFileSync(path.join('docs', 'deploy.md'), 'utf8');
  const match = new RegExp(
    `<!-- ${marker}:begin -->\\s*\`\`\`${language}\\n([\\s\\S]*?)\`\`\`\\s*<!-- ${marker}:end -->`,
  ).exec(doc);
  assert.ok(match?.[1], `docs/deploy.md holds the ${marker} block between its markers`);
  return match[1];
}

/**
 * `block` with each pattern replaced; every pattern must match, so that a changed document fails
 * the journey instead of running something else.
 */
export function replacing(block: string, replacements: readonly [RegExp, string][]): string {
  let text = block;
  for (const [pattern, replacement] of replacements) {
    assert.match(text, pattern, `the block of docs/deploy.md has ${String(pattern)}`);
    text = text.replace(pattern, replacement);
  }
  return text;
}
