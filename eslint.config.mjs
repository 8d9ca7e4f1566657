// The linter `npm test` runs (`eslint .`): ESLint's and typescript-eslint's recommended rules, and the type-aware
// rules about promises the compiler does not check (a promise nobody awaits loses its error and its ordering).
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // Built output, the committed Action bundle, and the Pulumi example (its own project, compiled by a test).
  { ignores: ['dist/', 'action/dist/', 'examples/', '**/node_modules/', 'coverage/', '.tmp/'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { project: './tsconfig.test.json', tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      // With noUncheckedIndexedAccess, a `!` or a cast the compiler does not need hides nothing but a future bug.
      '@typescript-eslint/no-unnecessary-type-assertion': 'error',
    },
  },
  {
    files: ['**/*.mjs', '**/*.js', '**/*.mts'],
    languageOptions: { globals: globals.node },
  },
  {
    rules: {
      // Unused arguments before a used one are the price of a fixed signature (handlers, callbacks); `_name` is a
      // field left out of a rest copy on purpose (`const { secret: _s, ...shown } = doc`) or a drained iteration.
      '@typescript-eslint/no-unused-vars': ['error', { args: 'after-used', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // `{}` is the identity of `&` in the types derived from the model and the operations table.
      '@typescript-eslint/no-empty-object-type': ['error', { allowObjectTypes: 'always' }],
      // Tests edit YAML with regexes that match its indentation literally.
      'no-regex-spaces': 'off',
    },
  },
  {
    // Pulumi serializes this provider object into state: it must require the runtime inside each call, not import it.
    files: ['provider/dynamic.ts'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
