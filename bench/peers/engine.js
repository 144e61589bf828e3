// The engine contestant: a documented SKELETON, skipped (loudly) until
// dist/index.js exports openDataset. The lead owns this file from here on.
//
// Expected API (issue 4):
//   const ds = await openDataset(path)
//   await ds.crosstab({ base, targets })
//     -> { base: {weighted, respondents}, targets: [{weighted, respondents, sumSqWeights, stability}] }
//   await ds.table({ base, rows, columns })   (later; answer layout to be confirmed)
// Codes are passed in text form ('AGEP=18..', 'SEX=2', 'SCHL=21..24', '*'); every
// shape code also has the JSON tree form in `code.expr` if the facade wants that.
//
// openDataset takes a compiled .arrow; when dist exports buildDataset, prepare()
// compiles the CSV.gz into a temp folder first, so ingest time includes the build.
// TODO(lead): survey codes/codebooks, and confirm the text grammar ('*', 'AGEP=18..')
// and the ds.table answer layout once it lands.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const distUrl = new URL('../../dist/index.js', import.meta.url);

export function createPeer() {
  let api, buildDir;
  const datasets = new Map();

  const cellsFromCrosstab = (result) => [result.base, ...result.targets];

  /** Row by row through crosstab: base AND row as the base, the columns as targets. */
  const tableByRows = async (ds, shape) => {
    const C = shape.columns.length;
    const weighted = new Float64Array(shape.rows.length * C), respondents = new Float64Array(shape.rows.length * C);
    const targets = shape.columns.map((c) => c.text);
    for (let r = 0; r < shape.rows.length; r++) {
      const row = shape.rows[r];
      const base = row.expr.all ? shape.base.text : `(${shape.base.text}) AND (${row.text})`;
      const result = await ds.crosstab({ base, targets });
      result.targets.forEach((cell, c) => { weighted[r * C + c] = cell.weighted; respondents[r * C + c] = cell.respondents; });
    }
    return { weighted, respondents, method: 'crosstab per row (ds.table not available)' };
  };

  return {
    name: 'engine',
    description: 'crosstab-engine (dist/index.js): openDataset + crosstab / table',
    usesColumnStore: false,
    async available() {
      if (!existsSync(fileURLToPath(distUrl))) return { ok: false, reason: 'dist/index.js not found (run `npm run build` first)' };
      try {
        api = await import(distUrl.href);
      } catch (error) {
        return { ok: false, reason: `importing dist/index.js failed: ${error.message.split('\n')[0]}` };
      }
      if (typeof api.openDataset !== 'function') return { ok: false, reason: 'dist/index.js does not export openDataset yet' };
      return { ok: true };
    },
    async prepare({ dataset }) {
      let path = dataset.path;
      let build;
      if (typeof api.buildDataset === 'function') {
        buildDir ??= mkdtempSync(join(tmpdir(), 'crosstab-bench-engine-'));
        path = join(buildDir, `${dataset.id}.arrow`);
        const report = await api.buildDataset(dataset.path, { weights: [dataset.weight], survey: dataset.id.toUpperCase(), out: path });
        build = { respondents: report.respondents, variables: report.variables, codes: report.codes, bytes: report.bytes, skipped: report.skipped };
      }
      datasets.set(dataset.id, await api.openDataset(path));
      return { path, build };
    },
    async run(shape) {
      const ds = datasets.get(shape.dataset);
      if (shape.kind === 'targets') {
        const result = await ds.crosstab({ base: shape.base.text, targets: shape.targets.map((t) => t.text) });
        const cells = cellsFromCrosstab(result);
        return {
          weighted: Float64Array.from(cells, (c) => c.weighted),
          respondents: Float64Array.from(cells, (c) => c.respondents),
          method: 'crosstab',
        };
      }
      if (typeof ds.table === 'function') {
        const result = await ds.table({ base: shape.base.text, rows: shape.rows.map((c) => c.text), columns: shape.columns.map((c) => c.text) });
        return { weighted: Float64Array.from(result.weighted), respondents: Float64Array.from(result.respondents), method: `table (${result.plan}, ${result.execution})` };
      }
      return tableByRows(ds, shape);
    },
    async release(datasetId) {
      await datasets.get(datasetId)?.close?.();
      datasets.delete(datasetId);
    },
    async close() {
      for (const id of [...datasets.keys()]) await this.release(id);
      if (buildDir) rmSync(buildDir, { recursive: true, force: true });
    },
  };
}
