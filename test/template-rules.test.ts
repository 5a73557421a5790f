/**
 * The egg variables' validation rules (src/templates/rules.ts) as tables: how a rule string is
 * split, which rules are not enforced, and what each enforced rule says of a value, with
 * Laravel's meaning (sizes are lengths unless integer/numeric is among the rules; an empty value
 * passes with `nullable` and fails `required`).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  checkValue,
  comparedVariables,
  compilePattern,
  interpretRule,
  parseRules,
  ruleNotes,
  unknownRules,
} from '../src/templates/rules.js';

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
      // read as what they mean
      'int',
      'nullable:string',
      'required:int',
      // comparisons and affixes
      'gt:0',
      'gte:-1.5',
      'lt:1e3',
      'lte: 10 ',
      'gt:environment.MIN_PLAYERS',
      'starts_with:a,b',
      'ends_with:.jar',
      'doesnt_start_with:-',
      'doesnt_end_with:.exe',
      'present',
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
      'int:5', // `int` takes no parameter
      'nullable:foo', // a modifier with an unknown rule after it
      'nullable:max:5', // … or one with a parameter
      'gt', // no parameter
      'gt:MIN_PLAYERS', // Laravel reads a bare name as a missing field: it would always fail
      'lt:environment.', // no variable
      'starts_with:', // nothing to start with
      'ends_with:,', // nor here
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
    // `int` is `integer`, sizes then compare the number
    ['required|int', '12', null],
    ['required|int', '1.5', 'must be an integer'],
    ['required|int|between:0,60', '61', 'must be between 0 and 60'],
    ['nullable|int', '', null],
    // `nullable:string` is nullable and string
    ['nullable:string', '', null],
    ['nullable:string', 'secret', null],
    ['required:int', '', 'is required'],
    ['required:int', 'x', 'must be an integer'],
    // gt/gte/lt/lte with a number: a numeric value compared with it, anything else fails
    ['required|integer|gt:0', '1', null],
    ['required|integer|gt:0', '0', 'must be greater than 0'],
    ['gt:0', '0.5', null],
    ['gt:0', 'abc', 'must be a number greater than 0'],
    ['gt:0', '', 'must not be empty'],
    ['nullable|gt:0', '', null],
    ['gte:10', '10', null],
    ['gte:10', '9.99', 'must be at least 10'],
    ['lt:1e3', '999', null],
    ['lt:1e3', '1000', 'must be less than 1e3'],
    ['lte:-1', '-1', null],
    ['lte:-1', '0', 'must be at most -1'],
    ['string|lte:5', 'abcdef', 'must be a number at most 5'],
    // starts_with/ends_with: any of the texts, case-sensitive
    ['ends_with:.jar', 'server.jar', null],
    ['ends_with:.jar', 'server.JAR', 'must end with .jar'],
    ['ends_with:.jar,.zip', 'map.zip', null],
    ['ends_with:.jar,.zip', 'map.rar', 'must end with one of .jar, .zip'],
    ['starts_with:http://,https://', 'https://x', null],
    ['starts_with:http://,https://', 'ftp://x', 'must start with one of http://, https://'],
    ['starts_with:a', '', 'must not be empty'],
    ['doesnt_start_with:-', '-x', 'must not start with -'],
    ['doesnt_start_with:-', 'x-', null],
    ['doesnt_end_with:.exe', '', null],
    ['doesnt_end_with:.exe,.bat', 'run.bat', 'must not end with one of .exe, .bat'],
    ['present', '', null],
    // a comparison with another variable that is not given is not checked
    ['gt:environment.MIN', '1', null],
  ];
  for (const [rules, value, expected] of cases) {
    it(`${rules || '(no rules)'} with ${JSON.stringify(value)} → ${expected ?? 'valid'}`, () => {
      assert.equal(checkValue(parseRules(rules), value), expected);
    });
  }

  describe('comparisons with another variable (gt:environment.NAME), as Laravel compares', () => {
    /** [rules, value, other value, expected] */
    const cases: readonly [string, string | null, string, string | null][] = [
      // both numeric: as numbers
      ['integer|gt:environment.MIN', '11', '10', null],
      ['integer|gt:environment.MIN', '10', '10', 'must be greater than MIN'],
      ['gte:environment.MIN', '10', '10', null],
      ['lt:environment.MIN', '9', '10', null],
      ['lte:environment.MIN', '10.5', '10', 'must be at most MIN'],
      ['gt:environment.MIN', '9', '10', 'must be greater than MIN'],
      // neither numeric: by length
      ['string|gt:environment.MIN', 'abcd', 'abc', null],
      ['string|gt:environment.MIN', 'abc', 'xyz', 'must have more characters than MIN'],
      ['lte:environment.MIN', 'abc', 'xy', 'must have at most as many characters as MIN'],
      // a numeric value against text: the number against the length (Laravel's getSize)
      ['gt:environment.MIN', '4', 'abc', null],
      ['gt:environment.MIN', '2', 'abc', 'must be greater than MIN'],
      // text against a number: lengths, unless integer/numeric make the other a number
      ['gt:environment.MIN', 'abcd', '3', null],
      ['gt:environment.MIN', 'ab', '3', null],
      ['gt:environment.MIN', 'a', '35', 'must have more characters than MIN'],
      ['gt:environment.MIN|integer', 'ab', '3', 'must be greater than MIN'],
      // an empty other value: a type mismatch for a value, two sizes of 0 for an empty one
      ['gt:environment.MIN', 'abc', '', 'cannot be compared with MIN, which is empty'],
      ['gte:environment.MIN', '', '', null],
      ['gt:environment.MIN', '', '', 'must not be empty'],
      ['gte:environment.MIN', '', '5', 'must not be empty'],
      ['nullable|gt:environment.MIN', '', '5', null],
    ];
    for (const [rules, value, other, expected] of cases) {
      it(`${rules} with ${JSON.stringify(value)}, MIN ${JSON.stringify(other)} → ${expected ?? 'valid'}`, () => {
        assert.equal(checkValue(parseRules(rules), value, { MIN: other }), expected);
      });
    }

    it('names the variables the rules compare with', () => {
      assert.deepEqual(
        comparedVariables(['gt:environment.A', 'lte:environment.B,x', 'gt:5', 'max:environment.C']),
        ['A', 'B'],
      );
    });
  });

  it('reads int and a modifier with a rule after a colon as what they mean, and says so', () => {
    assert.deepEqual(interpretRule('int'), ['integer']);
    assert.deepEqual(interpretRule('INT'), ['integer']);
    assert.deepEqual(interpretRule('nullable:string'), ['nullable', 'string']);
    assert.deepEqual(interpretRule('nullable:int'), ['nullable', 'integer']);
    assert.deepEqual(interpretRule('constructor'), ['constructor']);
    assert.deepEqual(interpretRule('max:5'), ['max:5']);
    assert.deepEqual(ruleNotes(['required', 'int', 'nullable:string', 'nullable:foo']), [
      { rule: 'int', readAs: 'integer' },
      { rule: 'nullable:string', readAs: 'nullable|string' },
    ]);
  });

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
      'gt:',
      'gt:environment.__proto__',
      'starts_with:""',
      'nullable:',
      'nullable:nullable:nullable',
      'toString',
      'int:',
    ];
    for (const rule of odd) {
      assert.doesNotThrow(() => checkValue([rule], 'value'), rule);
      assert.doesNotThrow(() => checkValue([rule], null, { __proto__: 'x' }), rule);
      assert.doesNotThrow(() => unknownRules([rule]), rule);
    }
  });
});
