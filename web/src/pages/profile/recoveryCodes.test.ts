import { describe, expect, it } from 'vitest';
import { recoveryCodesText, svgImageUrl } from './recoveryCodes';

describe('recovery codes', () => {
  it('writes one code per line under a header', () => {
    const text = recoveryCodesText('alice', ['aaaa-bbbb', 'cccc-dddd'], new Date(0));
    expect(text.split('\n')).toEqual([
      'Game panel recovery codes for alice, made 1970-01-01T00:00:00.000Z',
      'Each code signs in once in place of the authenticator app. Keep them somewhere safe.',
      '',
      'aaaa-bbbb',
      'cccc-dddd',
      '',
    ]);
  });

  it('makes an image address of an SVG, escaped', () => {
    const url = svgImageUrl('<svg xmlns="http://www.w3.org/2000/svg"><path d="M0 0"/></svg>');
    expect(url.startsWith('data:image/svg+xml;charset=utf-8,%3Csvg')).toBe(true);
    expect(url).not.toContain('<');
    expect(url).not.toContain('"');
  });
});
