/**
 * A template's file deny list (src/templates/denylist.ts): git's gitignore meaning, what the
 * egg importer keeps and drops, and matching in linear time whatever the patterns. The routes
 * that enforce it are in files-denylist.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../src/errors.js';
import { compileDenylist, DENYLIST_LIMITS, readDenylist } from '../src/templates/denylist.js';

const ruleFor = (patterns: string[], path: string, folder = false): string | null => {
  const { list, dropped } = compileDenylist(patterns);
  assert.deepEqual(dropped, [], `${JSON.stringify(patterns)} compiles`);
  return list.ruleFor(path === '' ? [] : path.split('/'), folder);
};

describe('the deny list means what a .gitignore means', () => {
  // [patterns, path, is it a folder, the rule that denies it or null]
  const CASES: readonly [string[], string, boolean, string | null][] = [
    // A name without a slash: at any depth, a file or a folder, and what is inside a folder.
    [['PalServer.sh'], 'PalServer.sh', false, 'PalServer.sh'],
    [['PalServer.sh'], 'Pal/Binaries/PalServer.sh', false, 'PalServer.sh'],
    [['PalServer.sh'], 'PalServer.sh.bak', false, null],
    [['*.jar'], 'server.jar', false, '*.jar'],
    [['*.jar'], 'libraries/a/b.jar', false, '*.jar'],
    [['*.jar'], 'jar', false, null],
    [['forgejo'], 'forgejo/data/app.db', false, 'forgejo'],
    // A leading or middle slash: from the top only.
    [['/server.jar'], 'server.jar', false, '/server.jar'],
    [['/server.jar'], 'sub/server.jar', false, null],
    [['config/secret.cfg'], 'config/secret.cfg', false, 'config/secret.cfg'],
    [['config/secret.cfg'], 'a/config/secret.cfg', false, null],
    [['config/*.cfg'], 'config/secret.cfg', false, 'config/*.cfg'],
    [['config/*.cfg'], 'config/sub/secret.cfg', false, null],
    // A trailing slash: folders only, and everything inside them.
    [['config/'], 'config', true, 'config/'],
    [['config/'], 'config', false, null],
    [['config/'], 'config/a.yml', false, 'config/'],
    [['config/'], 'world/config/a.yml', false, 'config/'],
    [['config/'], 'configs/a.yml', false, null],
    // `*` and `?` never cross a slash; classes, negated classes, escapes.
    [['logs/*.log'], 'logs/a/b.log', false, null],
    [['file?.txt'], 'file1.txt', false, 'file?.txt'],
    [['file?.txt'], 'file10.txt', false, null],
    [['file[0-9].txt'], 'file5.txt', false, 'file[0-9].txt'],
    [['file[!0-9].txt'], 'file5.txt', false, null],
    [['file[!0-9].txt'], 'filex.txt', false, 'file[!0-9].txt'],
    [['[[:upper:]]*'], 'Readme', false, '[[:upper:]]*'],
    [['a\\*b'], 'a*b', false, 'a\\*b'],
    [['a\\*b'], 'axb', false, null],
    [['\\#notes'], '#notes', false, '\\#notes'],
    [['\\!important'], '!important', false, '\\!important'],
    // `**`: any depth first, everything inside last, any folders between in the middle.
    [['**/secret.txt'], 'secret.txt', false, '**/secret.txt'],
    [['**/secret.txt'], 'a/b/secret.txt', false, '**/secret.txt'],
    [['data/**'], 'data', true, null],
    [['data/**'], 'data/a/b', false, 'data/**'],
    [['a/**/b'], 'a/b', false, 'a/**/b'],
    [['a/**/b'], 'a/x/y/b', false, 'a/**/b'],
    [['a/**/b'], 'a/x/y/c', false, null],
    [['a**b'], 'axxb', false, 'a**b'],
    [['a**b'], 'ax/xb', false, null],
    // `!` allows again; the last line that matches decides; a denied folder stays denied.
    [['*.cfg', '!public.cfg'], 'public.cfg', false, null],
    [['*.cfg', '!public.cfg'], 'secret.cfg', false, '*.cfg'],
    [['!public.cfg', '*.cfg'], 'public.cfg', false, '*.cfg'],
    [['config/*', '!config/public.cfg'], 'config/public.cfg', false, null],
    [['config/', '!config/public.cfg'], 'config/public.cfg', false, 'config/'],
    // Blank lines and comments count for nothing; lines are trimmed.
    [['', '# *.txt', '  notes.txt  '], 'notes.txt', false, 'notes.txt'],
    [['# notes.txt'], 'notes.txt', false, null],
    // The server's folder itself is never denied.
    [['**'], '', true, null],
    [['**'], 'anything/at/all', false, '**'],
  ];
  for (const [patterns, path, folder, expected] of CASES) {
    it(`${JSON.stringify(patterns)} on ${folder ? 'folder' : 'file'} "${path}": ${expected ?? 'allowed'}`, () => {
      assert.equal(ruleFor(patterns, path, folder), expected);
    });
  }

  it('walks down a tree one name at a time, as ruleFor does for a whole path', () => {
    const { list } = compileDenylist(['Pal/**/*.sh', '!Pal/keep.sh']);
    const pal = list.root().enter('Pal');
    assert.equal(pal.rule(true), null);
    assert.equal(pal.enter('PalServer.sh').rule(false), 'Pal/**/*.sh');
    assert.equal(pal.enter('keep.sh').rule(false), null);
    assert.equal(pal.enter('Binaries').enter('x.sh').rule(false), 'Pal/**/*.sh');
    // An anchored list says when nothing below a folder can be denied: walks skip it.
    assert.equal(list.root().enter('world').live, false);
    assert.equal(pal.live, true);
  });

  it('drops, with the reason, each line that cannot be compiled, and keeps the others', () => {
    const long = `${'a'.repeat(DENYLIST_LIMITS.length)}b`;
    const wild = '*'.repeat(DENYLIST_LIMITS.wildcards + 1);
    const { list, dropped } = compileDenylist([
      '[z-a]',
      'a[b',
      'trailing\\',
      '/',
      '!',
      'a//b',
      '[[:nope:]]',
      long,
      wild,
      'kept.txt',
    ]);
    assert.deepEqual(
      dropped.map(({ pattern, reason }) => [pattern, reason]),
      [
        ['[z-a]', 'cannot be compiled (invalid character class range: `z-a`)'],
        ['a[b', 'has a `[` without its `]`'],
        ['trailing\\', 'ends with a lone `\\`'],
        ['/', 'names no file'],
        ['!', 'names no file'],
        ['a//b', 'has an empty segment (`//`)'],
        ['[[:nope:]]', 'has an unknown `[:class:]`'],
        [long, `is longer than ${DENYLIST_LIMITS.length} characters`],
        [wild, `has more than ${DENYLIST_LIMITS.wildcards} wildcards`],
      ],
    );
    assert.deepEqual(list.patterns, ['kept.txt']);
  });
});

describe("an egg's file_denylist, as the import keeps it", () => {
  const read = (value: unknown): { lines: string[]; warnings: string[] } => {
    const warnings: string[] = [];
    return { lines: readDenylist(value, warnings), warnings };
  };

  it('a list (Pterodactyl), lines of text (its admin form), or nothing in every spelling', () => {
    assert.deepEqual(read(['PalServer.sh']), { lines: ['PalServer.sh'], warnings: [] });
    assert.deepEqual(read('*.jar\r\nconfig/\n\n# a comment'), {
      lines: ['*.jar', 'config/'],
      warnings: [],
    });
    for (const none of [undefined, null, '', [], {}, ['', null]]) {
      assert.deepEqual(read(none), { lines: [], warnings: [] }, JSON.stringify(none));
    }
  });

  it('drops a line it cannot compile or that is too long, with a warning naming it', () => {
    assert.deepEqual(read(['ok', '[z-a]', 'x'.repeat(DENYLIST_LIMITS.length + 1)]), {
      lines: ['ok'],
      warnings: [
        'file_denylist[1] ("[z-a]"): dropped: cannot be compiled (invalid character class range: `z-a`)',
        `file_denylist[2]: dropped: is longer than ${DENYLIST_LIMITS.length} characters`,
      ],
    });
  });

  it('refuses what is not a list of texts, and more lines than the limit, naming the field', () => {
    const refused = (value: unknown, path: string) => {
      assert.throws(
        () => read(value),
        (error: unknown) =>
          error instanceof AppError &&
          error.code === 'VALIDATION_FAILED' &&
          error.options.details?.[0]?.path === path,
      );
    };
    refused({ a: 'x' }, 'file_denylist');
    refused(42, 'file_denylist');
    refused(['ok', 3], 'file_denylist[1]');
    refused(['ok', ['nested']], 'file_denylist[1]');
    refused(
      Array.from({ length: DENYLIST_LIMITS.patterns + 1 }, (_, i) => `f${i}`),
      'file_denylist',
    );
  });
});

describe('matching takes time linear in the path, whatever the patterns', () => {
  /**
   * Patterns that make a backtracking glob matcher (or the regular expression a naive
   * translation gives JavaScript) take exponential time on a path of `a`s that ends in a
   * mismatch, as many as the limits allow.
   */
  const HOSTILE = Array.from({ length: DENYLIST_LIMITS.patterns }, (_, i) =>
    i % 2 === 0 ? `${'*a'.repeat(DENYLIST_LIMITS.wildcards)}b` : `**/a/**/a/**/a/**/a/**/a/**/b`,
  );

  /** Milliseconds to match every path of `paths`, the best of three runs. */
  const timed = (paths: string[][]): number => {
    const { list, dropped } = compileDenylist(HOSTILE);
    assert.deepEqual(dropped, []);
    // A first run compiles the matcher's paths in the engine; it is not counted.
    for (const path of paths) list.ruleFor(path, false);
    let best = Infinity;
    for (let run = 0; run < 3; run++) {
      const started = performance.now();
      for (const path of paths) assert.equal(list.ruleFor(path, false), null);
      best = Math.min(best, performance.now() - started);
    }
    return best;
  };

  it('a name four times as long, or four times as many folders, costs about four times as much', () => {
    // Long names: `*a*a…b` against `aaaa…` (one name, at most 255 bytes on Linux).
    const names = (length: number) => Array.from({ length: 200 }, () => ['a'.repeat(length)]);
    // Deep paths: `**/a/**/a/…/b` against `a/a/a/…/a`.
    const deep = (depth: number) =>
      Array.from({ length: 20 }, () => Array<string>(depth).fill('a'));
    for (const [label, short, long] of [
      ['long names', names(60), names(240)],
      // Deep enough that the engine's warm-up and the small fixed costs do not set the base.
      ['deep paths', deep(256), deep(1024)],
    ] as const) {
      const base = timed(short);
      const four = timed(long);
      // Linear: about 4; a quadratic matcher gives 16, an exponential one never ends.
      assert.ok(
        four <= Math.max(base, 1) * 10,
        `${label}: ${four.toFixed(1)} ms for four times the length, ${base.toFixed(1)} ms before`,
      );
    }
  });
});
