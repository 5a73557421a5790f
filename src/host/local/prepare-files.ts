/**
 * Before a template server starts: its template's config-file rules, with the values rendered
 * from the environment the start renders (`env`), applied to its folder. What happened is
 * said in the console, one line per file that changed or could not be changed; a file that could
 * not be changed does not stop the start (the game reads what is there).
 */
import type { ServerRecord } from '../../domain/server.js';
import type { TemplateDefinition } from '../../domain/template.js';
import type { Logger } from '../../log.js';
import { renderText } from '../../templates/render.js';
import { applyConfigFiles, serverConfigFiles, type ConfigFileStore } from './config-files.js';

export async function prepareConfigFiles(
  storage: ConfigFileStore,
  record: ServerRecord,
  template: TemplateDefinition,
  env: Readonly<Record<string, string>>,
  log: Logger,
): Promise<string[]> {
  if (template.configFiles.length === 0) return [];
  const report = await applyConfigFiles(
    template.configFiles,
    serverConfigFiles(storage, record.name, { quota: record.limits.diskBytes }),
    (value) => renderText(value, env),
  );
  const lines: string[] = [];
  for (const result of report.files) {
    if (result.cause !== undefined)
      log.error({ err: result.cause, server: record.name }, 'could not apply a config file rule');
    if (result.outcome === 'changed') lines.push(`[panel] updated ${result.file}`);
    if (result.outcome === 'created') lines.push(`[panel] created ${result.file}`);
    if (result.outcome === 'failed')
      lines.push(`[panel] could not update ${result.file}: ${result.error ?? 'unknown error'}`);
  }
  return lines;
}
