/**
 * The import order of src/: one folder per layer, top to bottom. A module may import its own
 * folder and the folders below it, never one above, and no import cycle anywhere.
 *
 *   cli          the `crosstab` command
 *   portal       the developer portal, over access/ and http/'s request helpers
 *   access       accounts, users, keys and usage in PostgreSQL: the only code that writes SQL
 *   http         the REST adapter, over the public facade
 *   keys         API key records and the KeyStore/UsageSink contracts, shared by http and access
 *   index.ts     the public facade's export list
 *   report       statistics registry and output formats, over facade/'s result types
 *   facade       openDataset(), crosstab(), table(), weighting a dataset; engines (local, ClickHouse)
 *   build        the build pipeline: read, compile, declare the design, check the codebook, write
 *   clickhouse   ClickHouse connection, schema, push, bound expressions as SQL
 *   pool         worker-thread pool over shared memory
 *   query        parser, resolver, evaluator, table plans
 *   dataset/file   the dataset file: reader (lazy buffers, checksums), writer, add-weight
 *   dataset/build  the compiler: classify, encode columns (worker threads), codebook, design
 *   dataset/input  CSV, SPSS, Parquet and Arrow readers into raw tables, and their workers
 *   dataset/format.ts  the on-disk format's layout and metadata types, shared by the three above
 *   dataset/weight-range.ts  the weights the engine computes with (build, append and weighting check them)
 *   stats        statistics from cell and design sums
 *   weighting    raking, post-stratification and calibration over arrays of cells
 *   kernel       the WebAssembly kernel's loader, memory and typed exports
 *   options.ts   checks of options at the edge, naming the option
 *   errors.ts    the one error class and its codes
 *   text         "did you mean" suggestions, expression text, numbers as text (imports nothing)
 *
 * Run by test/dependency-rules.test.ts (so by `npm test`), or by hand: `npm run deps`.
 */
const LAYERS = [
  'cli',
  'portal',
  'access',
  'http',
  'keys',
  'index\\.ts',
  'report',
  'facade',
  'build',
  'clickhouse',
  'pool',
  'query',
  'dataset/file',
  'dataset/build',
  'dataset/input',
  'dataset/format\\.ts',
  'dataset/weight-range\\.ts',
  'stats',
  'weighting',
  'kernel',
  'options\\.ts',
  'errors\\.ts',
  'text',
];

const pathOf = (names) => `^src/(${names.join('|')})(/|$)`;

const plain = (name) => name.replace(/\\/g, '');

const layerRules = LAYERS.slice(1).map((layer, index) => {
  const above = LAYERS.slice(0, index + 1);
  return {
    name: `${plain(layer)}-not-up`,
    severity: 'error',
    comment: `${plain(layer)} may not import a layer above it (${above.map(plain).join(', ')}).`,
    from: { path: pathOf([layer]) },
    to: { path: pathOf(above) },
  };
});

// Every file and folder of src/ belongs to a layer: a new folder has to be placed in LAYERS.
const unplaced = {
  name: 'layer-unplaced',
  severity: 'error',
  comment: 'Every folder of src/ is a layer: add a new folder to LAYERS in .dependency-cruiser.cjs.',
  from: { path: '^src/', pathNot: pathOf(LAYERS) },
  to: {},
};

// ...and a file that imports nothing is placed too: nothing may import an unplaced file.
const unplacedTarget = {
  name: 'layer-unplaced-import',
  severity: 'error',
  comment: 'An import of a file of src/ outside every layer: add it to LAYERS in .dependency-cruiser.cjs.',
  from: {},
  to: { path: '^src/', pathNot: pathOf(LAYERS) },
};

module.exports = {
  forbidden: [
    ...layerRules,
    unplaced,
    unplacedTarget,
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Import cycles, type-only imports included, are not allowed: move the shared part into its own module.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that does not resolve to a file or a package.',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
