/**
 * The `json` parser, through the walk of tree.ts. Numbers are written back exactly as they were
 * (`1.0`, `1e5`, integers past 2^53), keys such as `__proto__` are ordinary entries, and the
 * file's indentation and final newline are kept; a file that is empty becomes an object. Deeper
 * nesting than MAX_NESTING is refused before the file is parsed.
 */
import { randomBytes } from 'node:crypto';
import { ConfigFileError, MAX_NESTING, tooDeep, type Replacement } from './replacement.js';
import { applyTree, coerce, indexIn, type Tree } from './tree.js';

/**
 * Nesting of `[`/`{` outside JSON strings, and the numbers whose text JSON.parse would not give
 * back (`1.0`, `1e5`, integers past 2^53): those are replaced by marked strings, so that they are
 * written back exactly as they were.
 */
function protectNumbers(content: string, mark: string): string {
  let out = '';
  let copied = 0;
  let depth = 0;
  const number = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
  for (let i = 0; i < content.length; i += 1) {
    const char = content[i] ?? '';
    if (char === '"') {
      for (i += 1; i < content.length && content[i] !== '"'; i += content[i] === '\\' ? 2 : 1);
    } else if (char === '[' || char === '{') {
      depth += 1;
      if (depth > MAX_NESTING) throw tooDeep();
    } else if (char === ']' || char === '}') {
      depth -= 1;
    } else if (char === '-' || (char >= '0' && char <= '9')) {
      number.lastIndex = i;
      const raw = number.exec(content)?.[0];
      if (raw === undefined) continue;
      if (String(Number(raw)) !== raw) {
        out += content.slice(copied, i) + JSON.stringify(mark + raw);
        copied = i + raw.length;
      }
      i += raw.length - 1;
    }
  }
  return out + content.slice(copied);
}

type Json = unknown;

export function editJson(content: string, replacements: readonly Replacement[]): string {
  const empty = content.trim() === '';
  const mark = `\u0000${randomBytes(8).toString('hex')}:`;
  let root: Json = {};
  if (!empty) {
    try {
      JSON.parse(content);
    } catch (error) {
      throw new ConfigFileError(`The file is not valid JSON: ${(error as Error).message}`);
    }
    root = JSON.parse(protectNumbers(content, mark));
  }
  const state = { changed: false };
  const isMarked = (value: Json): value is string =>
    typeof value === 'string' && value.startsWith(mark);
  const isObject = (value: Json): value is Record<string, Json> =>
    typeof value === 'object' && value !== null && !Array.isArray(value);
  const tree: Tree<Json> = {
    kind: (node) =>
      Array.isArray(node)
        ? 'seq'
        : isObject(node)
          ? 'map'
          : node === undefined
            ? 'other'
            : 'scalar',
    child(node, key) {
      if (Array.isArray(node)) return node[Number(key)] as Json;
      return isObject(node) && Object.hasOwn(node, key) ? node[key] : undefined;
    },
    put(node, key, value) {
      if (Array.isArray(node)) {
        const index = indexIn(key, node.length);
        if (index === null) throw new ConfigFileError(`The list has no item ${key}`);
        if (node[index] !== value) state.changed = true;
        node[index] = value;
      } else if (isObject(node) && !(Object.hasOwn(node, key) && node[key] === value)) {
        // Defined, never assigned: a key such as `__proto__` is an ordinary entry.
        Object.defineProperty(node, key, {
          value,
          writable: true,
          enumerable: true,
          configurable: true,
        });
        state.changed = true;
      }
    },
    children: (node) =>
      Array.isArray(node)
        ? node.map((value: Json, index) => [String(index), value] as const)
        : isObject(node)
          ? Object.entries(node)
          : [],
    text(node) {
      if (isMarked(node)) return node.slice(mark.length);
      if (node === null) return '';
      if (typeof node === 'string' || typeof node === 'number' || typeof node === 'boolean') {
        return String(node);
      }
      return undefined;
    },
    leaf(text, current) {
      const value = coerce(text, typeof current === 'string' && !isMarked(current));
      return typeof value === 'bigint' ? mark + text : value;
    },
    map: () => ({}),
    seq: () => [],
  };
  for (const replacement of replacements) applyTree(tree, root, replacement);
  if (!state.changed || (empty && isObject(root) && Object.keys(root).length === 0)) return content;
  const indent = empty
    ? '  '
    : (/^([ \t]+)\S/m.exec(content)?.[1] ?? (content.trim().includes('\n') ? '  ' : ''));
  const escapedMark = JSON.stringify(mark).slice(1, -1).replaceAll('\\', '\\\\');
  const text = JSON.stringify(root, null, indent).replace(
    new RegExp(`"${escapedMark}([^"]*)"`, 'g'),
    (_all, raw: string) => raw,
  );
  return text + (empty || content.endsWith('\n') ? '\n' : '');
}
