/** Which highlighting a file gets in the editor, from its name alone. */
export type EditorLanguage =
  'json' | 'yaml' | 'properties' | 'toml' | 'ini' | 'shell' | 'log' | 'text';

const BY_EXTENSION: Readonly<Record<string, EditorLanguage>> = {
  json: 'json',
  json5: 'json',
  mcmeta: 'json',
  yml: 'yaml',
  yaml: 'yaml',
  properties: 'properties',
  lang: 'properties',
  toml: 'toml',
  ini: 'ini',
  cfg: 'ini',
  conf: 'ini',
  sh: 'shell',
  bash: 'shell',
  log: 'log',
  txt: 'text',
};

export function languageFor(fileName: string): EditorLanguage {
  const name = fileName.toLowerCase();
  // Rotated logs: latest.log.1, server.log.2024-01-01
  if (/\.log(\.[\w-]+)?$/.test(name)) return 'log';
  if (name === '.env' || name.endsWith('.env')) return 'shell';
  const dot = name.lastIndexOf('.');
  if (dot < 0) return 'text';
  return BY_EXTENSION[name.slice(dot + 1)] ?? 'text';
}
