/**
 * The egg variables' validation rules (src/templates/rules.ts) as tables: how a rule string is
 * split, which rules are not enforced, and what each enforced rule says of a value, with
 * Laravel's meaning (sizes are lengths unless integer/numeric is among the rules; an empty value
 * passes with `nullable` and fails `required`).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkValue, compilePattern, parseRules, unknownRules } from '../src/templates/rules.js';

describe('parseRules', () => {
  const cases: readonly [string | readonly string[], readonly string[]][] = [
    ['required|string|max:20', ['required', 'string', 'max:20']],
    [' required | nullable ||', ['required', 'nullable']],
    ['', []],
    [
      ['required', ' in:a,b ', ''],
      ['required', 'in:a,b'],
    ],
    // A pipe inside a pattern does not split it (eggs write this; Laravel would split).
    [
      'required|regex:/^(latest|[0-9.]+)$/|max:20',
      ['required', 'regex:/^(latest|[0-9.]+)$/', 'max:20'],
    ],
    ['regex:#^(a|b)$#i|min:1', ['regex:#^(a|b)$#i', 'min:1']],
    ['regex:{^(a|b)$}', ['regex:{^(a|b)$}']],
    ['not_regex:/x|y/|string', ['not_regex:/x|y/', 'string']],
    // An escaped delimiter does not end the pattern.
    ['regex:/^a\\/b|c$/|string', ['regex:/^a\\/b|c$/', 'string']],
    // A `/` inside the pattern that is not followed by flags and a pipe does not end it either.
    ['regex:/a/b|c/|max:2', ['regex:/a/b|c/', 'max:2']],
    // No closing delimiter: split on the pipe as Laravel would.
    ['regex:/open|max:3', ['regex:/open', 'max:3']],
    [['regex:/^(a|b)$/'], ['regex:/^(a|b)$/']],
  ];
  for (const [input, expected] of cases) {
    it(`${JSON.stringify(input)} → ${JSON.stringify(expected)}`, () => {
      assert.deepEqual(parseRules(input), expected);
    });
  }
});

describe('unknownRules', () => {
  it('lists every rule that is not enforced, as written, and no other', () => {
    const known = [
      'required',
      'nullable',
      'sometimes',
      'bail',
      'string',
      'integer',
      'numeric',
      'boolean',
      'min:1',
      'max:20',
      'between:1,6',
      'size:3',
      'in:a,b',
      'not_in:a',
      'alpha',
      'alpha_dash',
      'alphaDash',
      'alpha_num',
      'url',
      'digits:4',
      'digits_between:2,4',
      'regex:/^[\\w.-]*$/',
      'regex:/^\\p{L}+$/u',
      'regex:#^[a-z]+$#im',
      'regex:/^ a  b # comment\n$/x',
      'not_regex:/x/',
      // RE2 runs these in linear time: no longer refused as backtracking risks
      'regex:/(a+)+$/',
      'regex:/^(\\w*\\s?)*$/',
      'regex:/^(a|ab)*$/',
      'regex:/(?i)a/', // inline flags
      'regex:/a/U', // ungreedy
      'regex:/\\Qa.b\\E/',
    ];
    const unknown = [
      'foo:bar',
      'required_if:X,1',
      'exists:users,id',
      'max:x', // a size that is not a number
      'between:5', // one bound
      'in', // no values
      'string:x',
      'regex:/unterminated',
      'regex:abc', // no delimiter
      'regex:/a/A', // a flag RE2 has no equivalent for
      'regex:/a++/', // possessive
      'regex:/(?>a)/', // atomic group
      'regex:/(a)\\1/', // backreference
      'regex:/a(?=b)/', // lookahead
      'regex:/(?<!a)b/', // lookbehind
      'regex:/\\Ga/', // \G
      `regex:/${'.'.repeat(301)}/`, // too large once compiled
      'regex:/[/', // invalid
      `regex:/${'a'.repeat(501)}/`, // too long
    ];
    assert.deepEqual(unknownRules([...known, ...unknown]), unknown);
  });
});

describe('checkValue', () => {
  /** [rules, value, expected problem or null] */
  const cases: readonly [string, string | null, string | null][] = [
    ['required', 'x', null],
    ['required', '', 'is required'],
    ['required', '   ', 'is required'],
    ['required', null, 'is required'],
    ['required|nullable', '', 'is required'],
    // nullable: an empty value passes every other rule
    ['nullable|integer|min:5', '', null],
    ['nullable|url', null, null],
    ['nullable|integer', 'x', 'must be an integer'],
    // neither: empty fails a rule that an empty value (null to Laravel) fails…
    ['string|max:20', '', 'must not be empty'],
    ['integer', null, 'must not be empty'],
    ['in:a,b', '', 'must not be empty'],
    // …and passes one it does not
    ['max:20', '', null],
    ['sometimes', '', null],
    ['', '', null],
    // types
    ['string', 'anything at all', null],
    ['integer', '42', null],
    ['integer', '-7', null],
    ['integer', '+7', null],
    ['integer', '4.2', 'must be an integer'],
    ['integer', '042', 'must be an integer'],
    ['integer', '1e3', 'must be an integer'],
    ['integer', '9223372036854775808', 'must be an integer'],
    ['numeric', '4.2', null],
    ['numeric', '-.5', null],
    ['numeric', '1e3', null],
    ['numeric', '0x1A', 'must be a number'],
    ['numeric', 'Infinity', 'must be a number'],
    ['boolean', 'true', null],
    ['boolean', 'false', null],
    ['boolean', '1', null],
    ['boolean', '0', null],
    ['boolean', 'yes', 'must be true, false, 1 or 0'],
    ['boolean', 'TRUE', 'must be true, false, 1 or 0'],
    // sizes of strings are lengths, in characters (code points)
    ['string|max:20', 'a'.repeat(20), null],
    ['string|max:20', 'a'.repeat(21), 'must be at most 20 characters'],
    ['string|min:3', 'ab', 'must be at least 3 characters'],
    ['max:2', '😀😀', null],
    ['between:1,6', 'latest', null],
    ['between:1,6', 'snapshot', 'must be between 1 and 6 characters'],
    ['size:3', 'abcd', 'must be exactly 3 characters'],
    // …and of numbers the value, when integer or numeric is among the rules
    ['integer|max:20', '21', 'must be at most 20'],
    ['integer|max:20', '3', null],
    ['numeric|min:0.5', '0.25', 'must be at least 0.5'],
    ['integer|between:1024,65535', '80', 'must be between 1024 and 65535'],
    ['integer|between:1024,65535', '25565', null],
    ['max:20|integer', 'abc', 'must be an integer'],
    // lists
    ['in:1.20.1,latest', 'latest', null],
    ['in:1.20.1,latest', '1.19', 'must be one of 1.20.1, latest'],
    ['in:"a,b",c', 'a,b', null],
    ['not_in:root,admin', 'root', 'must not be one of root, admin'],
    ['not_in:root,admin', 'steve', null],
    // patterns (PCRE delimiters and flags)
    ['regex:/^([\\w\\d._-]+)(\\.jar)$/', 'server.jar', null],
    [
      'regex:/^([\\w\\d._-]+)(\\.jar)$/',
      'server.zip',
      'must match the pattern /^([\\w\\d._-]+)(\\.jar)$/',
    ],
    ['regex:/^(latest|[0-9.]+)$/', 'latest', null],
    ['regex:/^(latest|[0-9.]+)$/', 'beta', 'must match the pattern /^(latest|[0-9.]+)$/'],
    ['regex:/^[a-z]+$/i', 'ABC', null],
    ['regex:#^\\d{4}$#', '2024', null],
    ['regex:/\\Aab\\z/', 'ab', null],
    ['regex:/\\Aab\\z/', 'ab\n', 'must match the pattern /\\Aab\\z/'],
    ['regex:/^[[:alpha:]]+$/', 'abc', null],
    ['regex:/^[[:alpha:]]+$/', 'ab1', 'must match the pattern /^[[:alpha:]]+$/'],
    ['regex:/^(?P<n>a)b$/', 'ab', null],
    ['not_regex:/\\s/', 'a b', 'must not match the pattern /\\s/'],
    // characters
    ['alpha_dash', 'my-world_2', null],
    ['alpha_dash', 'my world', 'may only contain letters, numbers, dashes and underscores'],
    ['alphaDash', 'ünïcode-ok', null],
    ['alpha_num', 'abc123', null],
    ['alpha_num', 'abc-123', 'may only contain letters and numbers'],
    ['alpha', 'abc1', 'may only contain letters'],
    ['digits:4', '0042', null],
    ['digits:4', '42', 'must be 4 digits'],
    ['digits_between:2,4', '12345', 'must be between 2 and 4 digits'],
    ['url', 'https://example.com/map.zip', null],
    ['url', 'http://localhost:8080', null],
    ['url', 'example.com', 'must be a valid URL'],
    ['url', 'https://exa mple.com', 'must be a valid URL'],
    // unknown rules are ignored
    ['required|foo:bar', 'x', null],
    ['regex:/(a)\\1/', 'ab', null],
    // nested repetition runs, in linear time
    [
      'regex:/^(a+)+$/',
      'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!',
      'must match the pattern /^(a+)+$/',
    ],
    ['regex:/^(a+)+$/', 'aaaa', null],
    ['regex:/^([a-z0-9]{32} ?)*$/', `${'a'.repeat(32)} ${'b'.repeat(32)}`, null],
    // PCRE spellings RE2 has an equivalent for, and flags
    ['regex:/^\\h*a\\Z/', ' \ta\n', null],
    ['regex:/^a\\z/', 'a\n', 'must match the pattern /^a\\z/'],
    ['regex:/^[[:^digit:]]+$/', 'abc', null],
    ['regex:/^\\Qa.b\\E$/', 'axb', 'must match the pattern /^\\Qa.b\\E$/'],
    ['regex:/^(?i)abc$/', 'ABC', null],
    ['regex:/^a.b$/s', 'a\nb', null],
    ['regex:/^b$/m', 'a\nb', null],
    ['regex:/^(?<n>a)b$/', 'ab', null],
    // the first failing rule speaks
    ['required|integer|max:5', 'x', 'must be an integer'],
  ];
  for (const [rules, value, expected] of cases) {
    it(`${rules || '(no rules)'} with ${JSON.stringify(value)} → ${expected ?? 'valid'}`, () => {
      assert.equal(checkValue(parseRules(rules), value), expected);
    });
  }

  it('runs patterns that would backtrack catastrophically, in linear time (RE2)', () => {
    for (const pattern of ['/^(a+)+$/', '/^(a|a)*$/', '/^(\\w+\\s?)*$/', '/(x+x+)+y/']) {
      assert.equal(compilePattern(pattern).ok, true, pattern);
      assert.match(
        checkValue([`regex:${pattern}`], `${'a'.repeat(4000)}!`) ?? '',
        /^must match the pattern/,
        pattern,
      );
    }
  });

  it('says why a pattern is refused', () => {
    const reason = (param: string): string => {
      const compiled = compilePattern(param);
      return compiled.ok ? '' : compiled.reason;
    };
    assert.match(reason('/(a)\\1/'), /backreferences are not supported/);
    assert.match(reason('/a(?=b)/'), /lookahead and lookbehind are not supported/);
    assert.match(reason('/a++/'), /possessive quantifiers are not supported/);
    assert.match(reason('/(?>a)/'), /atomic groups are not supported/);
    assert.match(reason(`/${'.'.repeat(301)}/`), /too large once compiled/);
    assert.match(reason('abc'), /no delimiters/);
  });

  it('never throws for a malformed rule', () => {
    const odd = [
      'regex:',
      'regex:/',
      'regex://',
      'regex:/[/',
      'min:',
      'between:,',
      'in:',
      ':',
      '|',
    ];
    for (const rule of odd) {
      assert.doesNotThrow(() => checkValue([rule], 'value'), rule);
      assert.doesNotThrow(() => unknownRules([rule]), rule);
    }
  });
});
