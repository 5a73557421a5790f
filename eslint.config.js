// @ts-check
import js from '@eslint/js';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

const CHILD_PROCESS = {
  name: 'node:child_process',
  message: 'Only src/host/runtime may spawn processes.',
};

export default tseslint.config(
  {
    ignores: ['dist/', 'node_modules/', 'data/', 'coverage/', 'web/src/api/schema.d.ts'],
  },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  ...tseslint.configs.stylisticTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      'no-restricted-imports': ['error', { paths: [CHILD_PROCESS] }],
    },
  },
  {
    // The modules reach the machine only through the port, src/host/host.ts (docs/host.md).
    files: ['src/modules/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [CHILD_PROCESS],
          patterns: [
            {
              regex: '(^|/)host/(local|runtime|remote)(/|$)',
              message:
                'Modules use the ServerHost port (src/host/host.ts), not its implementation.',
            },
          ],
        },
      ],
    },
  },
  {
    // The port owns its language: it names nothing of an implementation.
    files: ['src/host/host.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [CHILD_PROCESS],
          patterns: [
            {
              regex: '^\\./(local|runtime|remote)(/|$)',
              message: 'The port declares its own types; implementations import them from it.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['test/**/*.ts', 'scripts/**', 'web/e2e/**'],
    rules: {
      'no-restricted-imports': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      // node:test's describe/it return promises the runner itself awaits.
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['describe', 'it', 'test'] },
          ],
        },
      ],
    },
  },
  {
    // The port's conformance suite knows no implementation but the file that builds them.
    files: ['test/host-port/**/*.ts'],
    ignores: ['test/host-port/implementations.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '(^|/)host/(local|runtime|remote)(/|$)',
              message: 'The conformance suite is written against the port only.',
            },
          ],
        },
      ],
    },
  },
  { files: ['web/src/**/*.{ts,tsx}'], ...reactHooks.configs.flat.recommended },
  { files: ['**/*.js', '**/*.mjs'], ...tseslint.configs.disableTypeChecked },
  {
    files: ['src/host/runtime/**'],
    rules: { 'no-restricted-imports': 'off' },
  },
  {
    // A game server's holder runs from its source, outside the bundle (docs/runtimes.md).
    files: ['src/host/runtime/process/holder/*.mjs'],
    languageOptions: {
      globals: {
        process: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
      },
    },
  },
  {
    files: ['scripts/**/*.mjs', 'test/fixtures/**/*.mjs'],
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', setTimeout: 'readonly' },
    },
  },
);
