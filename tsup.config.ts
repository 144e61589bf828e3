import { defineConfig } from 'tsup';

const common = { target: 'node20', platform: 'node', splitting: true, sourcemap: true } as const;
const library = { index: 'src/index.ts', 'http/index': 'src/http/index.ts' };

export default defineConfig([
  {
    ...common,
    entry: { ...library, 'cli/main': 'src/cli/main.ts', 'pool/worker': 'src/pool/worker.js', 'access/index': 'src/access/index.ts', 'access/pglite-worker': 'src/access/pglite-worker.js', 'dataset/csv-worker': 'src/dataset/input/csv-worker.js', 'dataset/compile-worker': 'src/dataset/build/compile-worker.js', 'dataset/parquet-worker': 'src/dataset/input/parquet-worker.ts', 'dataset/arrow-worker': 'src/dataset/input/arrow-worker.ts', 'report/table-worker': 'src/report/table-worker.ts' },
    format: ['esm'],
    dts: { entry: library },
  },
  {
    // CommonJS for `require('crosstab-engine')` and `require('crosstab-engine/http')`; the
    // package.json exports map picks it. The pool worker stays the ESM one.
    ...common,
    entry: library,
    format: ['cjs'],
    dts: { entry: library },
    // import.meta.url (used to find the kernel, the worker and the bundled datasets) in CJS.
    shims: true,
    // ESM-only dependencies, bundled so that require() works on every Node 20.
    noExternal: ['string-width', 'get-east-asian-width', 'strip-ansi', 'ansi-regex'],
  },
]);
