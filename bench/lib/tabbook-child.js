// One tab book in a process of its own, so that its peak RSS is its own: opens the dataset on
// the worker pool, computes the book (tabbook()), writes it (writeTabbook()), and prints one
// JSON line of timings. Before that, untimed, the pool's tables must equal the calling
// thread's (inline) for the first stubs, to 1e-9 relative: a fast wrong book is no result.
//   node bench/lib/tabbook-child.js '{"dataset":..., "banner":[...], "stubs":[...]|"all", "out":..., "layout":...}'
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './datasets.js';

const spec = JSON.parse(process.argv[2]);
const api = await import(join(repoRoot, 'dist', 'index.js'));

const started = performance.now();
const ds = await api.openDataset(spec.dataset, { execution: 'pool' });
const opened = performance.now();
const book = await api.tabbook(ds, { banner: spec.banner, stubs: spec.stubs });
const computed = performance.now();
await api.writeTabbook(book, spec.out, { format: 'xlsx', layout: spec.layout });
const written = performance.now();
const maxRssBytes = process.resourceUsage().maxRSS * 1024;

const inline = await api.openDataset(spec.dataset, { execution: 'inline' });
for (const table of book.tables.slice(0, 3)) {
  const check = await inline.table({ base: '*', rows: [{ variable: table.stub }], columns: spec.banner.map((name) => ({ variable: name })) });
  table.result.weighted.forEach((value, i) => {
    const other = check.weighted[i];
    if (Math.abs(value - other) > 1e-9 * Math.max(1, Math.abs(other)) || table.result.respondents[i] !== check.respondents[i]) {
      throw new Error(`something is off: ${table.stub} cell ${i}: pool ${value} (${table.result.respondents[i]}) vs inline ${other} (${check.respondents[i]})`);
    }
  });
}
await inline.close();
await ds.close();
await api.closePool();

console.log(JSON.stringify({
  tables: book.tables.length,
  skipped: book.skipped.map((skip) => skip.variable),
  columns: book.banner.length,
  rows: book.tables.reduce((sum, table) => sum + table.result.rows.length, 0),
  cells: book.tables.reduce((sum, table) => sum + table.result.rows.length * table.result.columns.length, 0),
  openSeconds: (opened - started) / 1000,
  computeSeconds: (computed - opened) / 1000,
  writeSeconds: (written - computed) / 1000,
  totalSeconds: (written - started) / 1000,
  maxRssBytes,
  bytes: statSync(spec.out).size,
}));
