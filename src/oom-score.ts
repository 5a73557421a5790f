/**
 * The panel's own `oom_score_adj` (docs/security.md, "Defaults that bound a tenant"): lowered at
 * start so that, when the host runs out of memory, the kernel ends a game server (raised to
 * SERVER_OOM_SCORE_ADJ) rather than the panel. Lowering needs root (CAP_SYS_RESOURCE); without
 * it the value is left as it is, and the start-up log says so.
 */
import { readFile, writeFile } from 'node:fs/promises';

export const PANEL_OOM_SCORE_ADJ = -500;

const FILE = '/proc/self/oom_score_adj';

/** Lowers it; answers the start-up log's line. Never throws. */
export async function lowerOwnOomScore(): Promise<{ level: 'info' | 'warn'; message: string }> {
  try {
    await writeFile(FILE, String(PANEL_OOM_SCORE_ADJ));
    return {
      level: 'info',
      message: `the panel's oom_score_adj is ${PANEL_OOM_SCORE_ADJ}: when memory runs out, game servers are ended first`,
    };
  } catch (error) {
    const current = await readFile(FILE, 'utf8').then(
      (text) => text.trim(),
      () => 'unknown',
    );
    const code = error instanceof Error && 'code' in error ? String(error.code) : 'unknown error';
    return {
      level: 'warn',
      message: `the panel's oom_score_adj stays ${current} (lowering it needs CAP_SYS_RESOURCE, which the panel lacks here: ${code}); game servers are still raised, so the kernel ends them first when memory runs out`,
    };
  }
}
