// The engine contestant: crosstab-engine as a user gets it, through the built package
// (dist/index.js, so `npm run build` first; available() says so when it is missing).
// prepare() compiles the shape's CSV.gz with buildDataset into a temp folder, so the
// ingest time includes the build, and opens it with openDataset. Shapes of targets run as
// one ds.crosstab({ base, targets }); tables as one ds.table({ base, rows, columns }),
// reporting which plan and execution the engine chose. Codes are passed in their text
// form ('AGEP=18..', 'SEX=2', 'SCHL=21..24', '*').
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const distUrl = new URL('../../dist/index.js', import.meta.url);

export function createPeer({ engineBuild = 'indexed' } = {}) {
  let api, buildDir;
  const datasets = new Map();

  const cellsFromCrosstab = (result) => [result.base, ...result.targets];

  return {
    name: 'engine',
    description: 'crosstab-engine (dist/index.js): openDataset (cell cache off) + crosstab / table',
    usesColumnStore: false,
    async available() {
      if (!existsSync(fileURLToPath(distUrl))) return { ok: false, reason: 'dist/index.js not found (run `npm run build` first)' };
      try {
        api = await import(distUrl.href);
      } catch (error) {
        return { ok: false, reason: `importing dist/index.js failed: ${error.message.split('\n')[0]}` };
      }
      if (typeof api.openDataset !== 'function' || typeof api.buildDataset !== 'function') return { ok: false, reason: 'dist/index.js does not export openDataset and buildDataset' };
      return { ok: true };
    },
    async prepare({ dataset }) {
      buildDir ??= mkdtempSync(join(tmpdir(), 'crosstab-bench-engine-'));
      const path = join(buildDir, `${dataset.id}.arrow`);
      // 'default': the build a user gets (no range-index option: the automatic rule picks).
      const rangeIndex = engineBuild === 'indexed' && dataset.rangeIndex ? { rangeIndex: dataset.rangeIndex } : {};
      const timed = async (options, out) => {
        const started = performance.now();
        const report = await api.buildDataset(dataset.path, { weights: [dataset.weight], survey: dataset.id.toUpperCase(), out, ...options });
        return { seconds: (performance.now() - started) / 1000, report };
      };
      // The default build's cost: builds with --range-index none and without the option, taking turns (twice each).
      const versusNone = engineBuild === 'default' ? { none: [], default: [] } : undefined;
      let built;
      if (versusNone) {
        const plain = join(buildDir, `${dataset.id}-none.arrow`);
        for (let turn = 0; turn < 2; turn++) {
          const none = await timed({ rangeIndex: 'none' }, plain);
          versusNone.none.push({ seconds: none.seconds, bytes: none.report.bytes });
          built = await timed({}, path);
          versusNone.default.push({ seconds: built.seconds, bytes: built.report.bytes });
        }
        rmSync(plain, { force: true });
        built.seconds = Math.min(...versusNone.default.map((b) => b.seconds));
      } else {
        built = await timed(rangeIndex, path);
      }
      const { seconds, report } = built;
      const build = { engineBuild, buildSeconds: seconds, respondents: report.respondents, variables: report.variables, codes: report.codes, bytes: report.bytes, skipped: report.skipped, ...(versusNone ? { versusNone } : {}) };
      // The cell cache off: every run computes its cells (S1 repeats one question).
      const ds = await api.openDataset(path, { cellCache: 0 });
      datasets.set(dataset.id, ds);
      build.rangeIndex = ds.info.variables.filter((v) => v.rangeIndex === true).map((v) => v.name);
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
      const result = await ds.table({ base: shape.base.text, rows: shape.rows.map((c) => c.text), columns: shape.columns.map((c) => c.text) });
      return { weighted: Float64Array.from(result.weighted), respondents: Float64Array.from(result.respondents), method: `table (${result.plan}, ${result.execution})` };
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
