/**
 * The import order of src/: a module may import its own layer and the
 * layers below it, never one above, and no import cycle anywhere.
 *
 *   cli
 *   http, access, portal      (the account store and the web portal serve beside the REST adapter)
 *   facade (with src/index.ts), report, clickhouse (the ClickHouse engine behind the same Dataset)
 *   query, pool
 *   dataset
 *   kernel, stats, weighting
 *   errors.ts, text           (the error class, "did you mean" suggestions)
 *
 * Run by test/dependency-rules.test.ts (so by `npm test`), or by hand:
 * `npx depcruise src --config .dependency-cruiser.cjs`.
 */
const LAYERS = [
  ['cli'],
  ['http', 'access', 'portal'],
  ['facade', 'index\\.ts', 'report', 'clickhouse'],
  ['query', 'pool'],
  ['dataset'],
  ['kernel', 'stats', 'weighting'],
  ['errors\\.ts', 'text'],
];

const pathOf = (names) => `^src/(${names.join('|')})(/|$)`;

const layerRules = LAYERS.slice(1).map((layer, index) => {
  const above = LAYERS.slice(0, index + 1).flat();
  return {
    name: `${layer.join('-').replace(/\\\./g, '.')}-not-up`,
    severity: 'error',
    comment: `${layer.join(', ').replace(/\\/g, '')} may not import a layer above it (${above.join(', ').replace(/\\/g, '')}).`,
    from: { path: pathOf(layer) },
    to: { path: pathOf(above) },
  };
});

module.exports = {
  forbidden: [
    ...layerRules,
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
