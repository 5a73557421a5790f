/**
 * The `yaml` parser, through the walk of tree.ts and the `yaml` Document API: comments, styles,
 * key order and the layout of sequences and flow collections stay as they were. Aliases are never
 * expanded; a key repeated where a rule looks it up is refused; deeper nesting than MAX_NESTING
 * is refused before the file is parsed.
 */
import {
  isMap,
  isNode,
  isScalar,
  isSeq,
  parseDocument,
  Scalar,
  YAMLMap,
  YAMLSeq,
  type Document as YamlDocument,
  type Node as YamlNode,
} from 'yaml';
import { ConfigFileError, MAX_NESTING, tooDeep, type Replacement } from './replacement.js';
import { applyTree, coerce, indexIn, type Tree } from './tree.js';

/** A YAML scalar's value as text: null as ''; undefined for what is not a plain value. */
function scalarText(value: unknown): string | undefined {
  if (value === null || value === undefined) return '';
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
    case 'bigint':
    case 'boolean':
      return String(value);
    default:
      return undefined;
  }
}

/** Nesting of flow collections, counted roughly (brackets anywhere count). */
function yamlNesting(content: string): number {
  let depth = 0;
  let deepest = 0;
  for (const char of content) {
    if (char === '[' || char === '{') deepest = Math.max(deepest, (depth += 1));
    else if ((char === ']' || char === '}') && depth > 0) depth -= 1;
  }
  return deepest;
}

type Yaml = YamlNode | null;

export function editYaml(content: string, replacements: readonly Replacement[]): string {
  if (yamlNesting(content) > MAX_NESTING) throw tooDeep();
  // Aliases are never expanded (no toJS), so an alias bomb costs nothing.
  // Keys are checked for duplicates where a rule looks them up: the parser's own check
  // (`uniqueKeys`) takes time growing with the square of a map's size.
  const doc: YamlDocument = parseDocument(content, { intAsBigInt: true, uniqueKeys: false });
  const [error] = doc.errors;
  if (error) throw new ConfigFileError(`The file is not valid YAML: ${error.message}`);
  const state = { changed: false };
  const pairOf = (node: YAMLMap, key: string) => {
    const pairs = node.items.filter((pair) =>
      isScalar(pair.key) ? scalarText(pair.key.value) === key : pair.key === key,
    );
    if (pairs.length > 1) throw new ConfigFileError(`The key ${JSON.stringify(key)} is repeated`);
    return pairs[0];
  };
  const asYaml = (value: unknown): Yaml => (isNode(value) ? value : null);
  /** Puts a scalar's new value into the scalar there, keeping its comments and style. */
  const replace = (old: unknown, value: Yaml, assign: (value: Yaml) => void): void => {
    if (isScalar(old) && isScalar(value)) {
      if (old.value !== value.value) {
        old.value = value.value;
        state.changed = true;
      }
    } else {
      assign(value);
      state.changed = true;
    }
  };
  const tree: Tree<Yaml> = {
    kind: (node) =>
      isMap(node)
        ? 'map'
        : isSeq(node)
          ? 'seq'
          : node === null || isScalar(node)
            ? 'scalar'
            : 'other',
    child(node, key) {
      if (isSeq(node)) return asYaml(node.items[Number(key)]);
      if (!isMap(node)) return undefined;
      const pair = pairOf(node, key);
      return pair ? asYaml(pair.value) : undefined;
    },
    put(node, key, value) {
      if (isSeq(node)) {
        const index = indexIn(key, node.items.length);
        if (index === null) throw new ConfigFileError(`The list has no item ${key}`);
        replace(node.items[index], value, (next) => (node.items[index] = next));
      } else if (isMap(node)) {
        const pair = pairOf(node, key);
        if (pair) replace(pair.value, value, (next) => (pair.value = next));
        else {
          node.items.push(doc.createPair(key, value));
          state.changed = true;
        }
      }
    },
    children(node) {
      if (isSeq(node))
        return node.items.map((item, index) => [String(index), asYaml(item)] as const);
      if (!isMap(node)) return [];
      return node.items.flatMap((pair) =>
        isScalar(pair.key) ? [[scalarText(pair.key.value) ?? '', asYaml(pair.value)] as const] : [],
      );
    },
    text(node) {
      if (node === null) return '';
      if (!isScalar(node)) return undefined;
      return scalarText(node.value);
    },
    leaf: (text, current) =>
      new Scalar(coerce(text, isScalar(current) && typeof current.value === 'string')),
    map: () => new YAMLMap(),
    seq: () => new YAMLSeq(),
  };
  const empty = doc.contents === null;
  if (empty) doc.contents = new YAMLMap();
  for (const replacement of replacements) applyTree(tree, doc.contents, replacement);
  if (!state.changed) return content;
  // Sequences stay indented the way the file had them (`key:\n- a` or `key:\n  - a`).
  const indentSeq = !/^([ \t]*)[^\s#-][^\n]*:[ \t]*\r?\n\1- /m.test(content);
  // Flow collections keep their padding (`[ a ]` or `[a]`).
  const flowCollectionPadding = !/[[{][^\s\]}]/.test(content);
  return doc.toString({ lineWidth: 0, indentSeq, flowCollectionPadding });
}
