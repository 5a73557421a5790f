/**
 * The walk shared by the tree formats (`json`, `yaml`): a match is a dotted path, where `*` stands
 * for every entry of an object or list and `name[0]` or a number is a list index. Missing objects
 * on the way are made, and `[0]` of a missing list makes the list; a replacement with `ifValue`
 * never makes anything. Each format says how it sees its documents through a `Tree`; the walk
 * throws ConfigFileError where the path cannot be followed.
 */
import { ConfigFileError, decide, type Replacement } from './replacement.js';

type Step = { readonly key: string } | { readonly index: number } | '*';

function stepsOf(match: string): Step[] {
  const steps: Step[] = [];
  for (const part of match.split('.')) {
    if (part === '*') {
      steps.push('*');
      continue;
    }
    const parsed = /^([^[\]]*)((?:\[\d{1,6}\])*)$/.exec(part);
    if (!parsed || part === '') {
      throw new ConfigFileError(`${JSON.stringify(match)} is not a valid key path`);
    }
    if (parsed[1]) steps.push({ key: parsed[1] });
    for (const index of (parsed[2] ?? '').matchAll(/\d+/g)) steps.push({ index: Number(index[0]) });
  }
  return steps;
}

/** How the walk sees one kind of document. `N` is a value in it. */
export interface Tree<N> {
  kind(node: N): 'map' | 'seq' | 'scalar' | 'other';
  /** The entry `key` (a list's index as text), or undefined. */
  child(node: N, key: string): N | undefined;
  /** Sets an entry; a list's index may be its length (appends). */
  put(node: N, key: string, value: N): void;
  children(node: N): (readonly [string, N])[];
  /** A scalar's value as text (null as ''); undefined for anything else. */
  text(node: N): string | undefined;
  /** The value to write for `text` where `current` is. */
  leaf(text: string, current: N | undefined): N;
  map(): N;
  seq(): N;
}

/**
 * A new value's type: a string where the current value is a string; else an integer when it is
 * written like one, a boolean for `true` and `false`, and a string otherwise.
 */
export function coerce(text: string, currentIsString: boolean): string | number | bigint | boolean {
  if (currentIsString) return text;
  if (/^-?(?:0|[1-9]\d*)$/.test(text)) {
    const number = Number(text);
    return Number.isSafeInteger(number) ? number : BigInt(text);
  }
  if (text === 'true' || text === 'false') return text === 'true';
  return text;
}

export function applyTree<N>(tree: Tree<N>, root: N, replacement: Replacement): void {
  const steps = stepsOf(replacement.match);
  const isCollection = (node: N): boolean => {
    const kind = tree.kind(node);
    return kind === 'map' || kind === 'seq';
  };
  const fail = (at: number, what: string): never => {
    const where = replacement.match
      .split('.')
      .slice(0, at + 1)
      .join('.');
    throw new ConfigFileError(`${JSON.stringify(replacement.match)}: ${where} ${what}`);
  };
  const setLeaf = (node: N, key: string, current: N | undefined): void => {
    const next = decide(replacement, current === undefined ? undefined : tree.text(current));
    if (next !== null) tree.put(node, key, tree.leaf(next, current));
  };
  const walk = (node: N, at: number): void => {
    const step = steps[at];
    if (step === undefined) return;
    const last = at === steps.length - 1;
    if (step === '*') {
      for (const [key, child] of tree.children(node)) {
        if (last) setLeaf(node, key, child);
        else if (isCollection(child)) walk(child, at + 1);
      }
      return;
    }
    const kind = tree.kind(node);
    const key = 'key' in step ? step.key : String(step.index);
    if (kind === 'seq' ? !/^\d+$/.test(key) : 'index' in step) {
      if (replacement.ifValue !== null) return;
      fail(at, kind === 'seq' ? 'is a list, not an object' : 'is not a list');
    }
    const child = tree.child(node, key);
    if (last) {
      setLeaf(node, key, child);
      return;
    }
    if (child !== undefined && isCollection(child)) {
      walk(child, at + 1);
      return;
    }
    if (replacement.ifValue !== null) return;
    if (child !== undefined && tree.text(child) !== '') fail(at, 'is not an object or a list');
    const next = steps[at + 1];
    const made = typeof next === 'object' && 'index' in next ? tree.seq() : tree.map();
    if (tree.kind(made) === 'seq' && typeof next === 'object' && 'index' in next && next.index) {
      fail(at, `has no list to set item ${next.index} of`);
    }
    tree.put(node, key, made);
    walk(made, at + 1);
  };
  const kind = tree.kind(root);
  if (kind !== 'map' && kind !== 'seq') {
    throw new ConfigFileError('The top level of the file is not an object or a list');
  }
  walk(root, 0);
}

/** A list index as a number, when it is one and no further than `length` (appending). */
export function indexIn(key: string, length: number): number | null {
  const index = /^\d+$/.test(key) ? Number(key) : NaN;
  return index <= length ? index : null;
}
