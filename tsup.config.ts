import { defineConfig } from 'tsup';

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    'http/index': 'src/http/index.ts',
    'cli/main': 'src/cli/main.ts',
    'pool/worker': 'src/pool/worker.js',
  },
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  dts: { entry: { index: 'src/index.ts', 'http/index': 'src/http/index.ts' } },
  splitting: true,
  sourcemap: true,
  clean: true,
});
