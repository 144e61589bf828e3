// The contestants, in order; the first one that is available is the reference
// the others are checked against. Each module exports createPeer(options) -> peer:
//
//   name, description
//   usesColumnStore     true: prepare() gets the harness's parsed columns (JS peers)
//   available()         -> {ok, reason?, ...versions}; not ok = skipped, printed loudly
//   prepare({dataset, store}) -> details   ingest into the peer's queryable form
//   run(shape, variant?) -> {weighted: Float64Array, respondents: Float64Array, method, sql?}
//                           cells row-major, shape.rows.length x shape.columns.length,
//                           cell (r,c) = shape.base AND shape.rows[r] AND shape.columns[c]
//   variantsFor(shape)  optional: names of alternative methods, first = default
//   release(datasetId), close()
//
// Extension point: the engine is `engine.js` (a skeleton until dist/index.js has
// openDataset). A new contestant is one more file here and one more line below.
export const PEERS = [
  { name: 'one-pass-scan', load: () => import('./one-pass-scan.js') },
  { name: 'js-scan', load: () => import('./js-scan.js') },
  { name: 'typed-bitset', load: () => import('./typed-bitset.js') },
  { name: 'roaring', load: () => import('./roaring.js') },
  { name: 'duckdb', load: () => import('./duckdb.js') },
  { name: 'engine', load: () => import('./engine.js') },
  { name: 'clickhouse', load: () => import('./clickhouse.js') },
];
