import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'indexes/**',
      'coverage/**',
      'bench/results/**',
      'bench/data/**',
      'bench/.venv/**',
      'src/index/bm25/wasm/**',
      'src/index/dense/wasm/**',
    ],
  },
  ...tseslint.configs.recommended,
  {
    files: ['src/**/*.ts'],
    rules: {
      // stdout belongs to the MCP transport
      'no-console': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // environment variables are read at the CLI boundary only (config.ts readEnv, cli/)
    files: ['src/**/*.ts'],
    ignores: ['src/config.ts', 'src/cli/**'],
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'read the environment in config.ts readEnv() only' },
      ],
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }] },
  },
);
