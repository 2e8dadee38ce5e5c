// ESLint (flat config) with typescript-eslint: the recommended rules everywhere, and the
// type-aware ones where they catch real bugs in this code base: promises nobody awaits or
// handles, promises passed where a callback's return is ignored, unused names. Prettier formats.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'coverage/**',
      'data/**',
      'bench/results/**',
      'e2e/artifacts/**',
      'public/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: {
        project: ['./tsconfig.test.json', './bench/tsconfig.json'],
        tsconfigRootDir: import.meta.dirname,
      },
      globals: { ...globals.node },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': [
        'error',
        { checksVoidReturn: { arguments: false, attributes: false } },
      ],
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          caughtErrors: 'none',
        },
      ],
      // Express's and express-session's types are extended by declaration merging (`declare global { namespace Express … }`).
      '@typescript-eslint/no-namespace': ['error', { allowDeclarations: true }],
      // A `let` assigned once, after a closure that reads it was made (the server a handler needs).
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      '@typescript-eslint/no-explicit-any': 'off',
      // `require` inside a function is how a heavy library loads at its first use, not at start
      // (nodemailer, otplib, libphonenumber's metadata, the Redis client): kept on purpose.
      '@typescript-eslint/no-require-imports': 'off',
    },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
    // The scripts and the CLI's launcher are CommonJS, run by node as they are.
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  // Formatting is Prettier's (.prettierrc.json): ESLint's stylistic rules that would disagree are off.
  prettier,
);
