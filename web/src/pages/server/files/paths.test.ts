import { describe, expect, it } from 'vitest';
import { languageFor } from './language';
import { baseName, breadcrumbs, filesUrl, join, nameProblem, normalise, parent } from './paths';

describe('paths', () => {
  it('normalises, joins and splits paths', () => {
    expect(normalise('/a//b/./c/')).toBe('a/b/c');
    expect(normalise('/')).toBe('');
    expect(join('', 'x.txt')).toBe('x.txt');
    expect(join('a/b', 'x.txt')).toBe('a/b/x.txt');
    expect(parent('a/b/x.txt')).toBe('a/b');
    expect(parent('x.txt')).toBe('');
    expect(baseName('a/b/x.txt')).toBe('x.txt');
  });

  it('gives the root and each folder as a breadcrumb', () => {
    expect(breadcrumbs('')).toEqual([{ name: 'Files', path: '' }]);
    expect(breadcrumbs('world/region')).toEqual([
      { name: 'Files', path: '' },
      { name: 'world', path: 'world' },
      { name: 'region', path: 'world/region' },
    ]);
  });

  it('puts the path in the URL one encoded segment at a time', () => {
    expect(filesUrl('mc', '')).toBe('/servers/mc/files');
    expect(filesUrl('mc', 'plugins/my file#1.yml', true)).toBe(
      '/servers/mc/files/plugins/my%20file%231.yml?edit',
    );
    expect(filesUrl('a b', 'x')).toBe('/servers/a%20b/files/x');
  });

  it('says what is wrong with a new name', () => {
    expect(nameProblem('ok.txt')).toBeNull();
    expect(nameProblem('  ')).toBe('Enter a name');
    expect(nameProblem('a/b')).toBe('A name cannot contain / or \\');
    expect(nameProblem('..')).toBe('Choose another name');
  });
});

describe('languageFor', () => {
  it('picks the highlighting from the file name', () => {
    expect(languageFor('server.properties')).toBe('properties');
    expect(languageFor('config.YML')).toBe('yaml');
    expect(languageFor('ops.json')).toBe('json');
    expect(languageFor('pack.mcmeta')).toBe('json');
    expect(languageFor('Cargo.toml')).toBe('toml');
    expect(languageFor('minetest.conf')).toBe('ini');
    expect(languageFor('start.sh')).toBe('shell');
    expect(languageFor('latest.log')).toBe('log');
    expect(languageFor('debug.log.1')).toBe('log');
    expect(languageFor('eula.txt')).toBe('text');
    expect(languageFor('README')).toBe('text');
  });
});
