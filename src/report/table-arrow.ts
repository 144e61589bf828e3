import { Float64, Int32, RecordBatch, Schema, Table, Utf8, tableToIPC, vectorFromArray, type Vector } from 'apache-arrow';
import type { TableResult } from '../facade/types.js';
import { finiteOrNull, presentFigures } from './cell-figures.js';
import type { TableStatistics } from './table-statistics.js';
import { raoScottJson } from './table-json.js';
import { missingNote } from './display.js';

/** Schema metadata key holding the table's context (base, weight, units, totals, statistics settings) as JSON. */
export const TABLE_METADATA_KEY = 'crosstab.table';

/**
 * The table as an Apache Arrow table, one row per cell (rows outer, columns inner):
 * `row`, `column` (Int32, 0-based), `rowLabel`, `rowExpr`, `columnLabel`, `columnExpr`,
 * `columnLetter` (Utf8, null when the column is not compared), `weighted`,
 * `sumSqWeights` (Float64), `respondents` (Int32), `stability` (Utf8), then the figure of
 * each requested statistic as Float64, named and ordered as the statistics registry
 * (FIGURES: `columnPct` … `weightedSE`, `weightedMoE`; null where undefined), and
 * `letters` (Utf8). The schema metadata `crosstab.table` holds base, weight,
 * units, thresholds, totals, statistics settings and column groups as JSON.
 */
export function tableToArrow(result: TableResult, statistics?: TableStatistics): Table {
  const width = result.columns.length;
  const size = result.rows.length * width;
  const rowOf = (at: number) => Math.floor(at / width);
  const columnOf = (at: number) => at % width;
  const each = <T>(pick: (at: number) => T): T[] => Array.from({ length: size }, (_, at) => pick(at));
  const cells = each((at) => result.cell(rowOf(at), columnOf(at)));

  const vectors: Record<string, Vector> = {
    row: vectorFromArray(each(rowOf), new Int32()),
    rowLabel: vectorFromArray(each((at) => result.rows[rowOf(at)]!.label), new Utf8()),
    rowExpr: vectorFromArray(each((at) => result.rows[rowOf(at)]!.expr), new Utf8()),
    column: vectorFromArray(each(columnOf), new Int32()),
    columnLabel: vectorFromArray(each((at) => result.columns[columnOf(at)]!.label), new Utf8()),
    columnExpr: vectorFromArray(each((at) => result.columns[columnOf(at)]!.expr), new Utf8()),
    columnLetter: vectorFromArray(each((at) => statistics?.columnLetters[columnOf(at)] ?? null), new Utf8()),
    weighted: vectorFromArray(cells.map((cell) => cell.weighted), new Float64()),
    respondents: vectorFromArray(cells.map((cell) => cell.respondents), new Int32()),
    sumSqWeights: vectorFromArray(cells.map((cell) => cell.sumSqWeights), new Float64()),
    stability: vectorFromArray(cells.map((cell) => cell.stability), new Utf8()),
  };
  for (const figure of presentFigures(statistics)) {
    vectors[figure.field] = vectorFromArray(
      Array.from(figure.values, (value) => (Number.isFinite(value) ? value : null)),
      new Float64(),
    );
  }
  if (statistics?.letters) vectors['letters'] = vectorFromArray(statistics.letters, new Utf8());

  const plain = new Table(vectors);
  const schema = new Schema(plain.schema.fields, new Map([[TABLE_METADATA_KEY, JSON.stringify(tableContext(result, statistics))]]));
  return new Table(schema, plain.batches.map((batch) => new RecordBatch(schema, batch.data)));
}

/** Arrow IPC **file** bytes of {@link tableToArrow} (readable by `tableFromIPC`, pyarrow, DuckDB, R arrow). */
export function tableToArrowIPC(result: TableResult, statistics?: TableStatistics): Uint8Array {
  return tableToIPC(tableToArrow(result, statistics), 'file');
}

function tableContext(result: TableResult, statistics: TableStatistics | undefined) {
  return {
    base: result.base,
    weight: result.weight,
    units: result.units,
    stabilityThresholds: result.stability,
    missing: result.missing,
    percentBase: statistics?.percentBase ?? result.percentBase,
    missingNote: missingNote(result, statistics),
    rows: result.rows,
    columns: result.columns,
    rowTotals: result.rowTotals,
    columnTotals: result.columnTotals,
    total: result.total,
    ...(statistics
      ? {
          statistics: {
            stats: statistics.stats,
            se: statistics.se,
            test: statistics.test,
            correction: statistics.correction,
            alpha: statistics.alpha,
            deff: statistics.deff,
            designRespondents: finiteOrNull(statistics.designRespondents),
            domain: statistics.domain,
            lonelyPsu: statistics.lonelyPsu,
            variance: statistics.variance,
            percentBase: statistics.percentBase,
          },
          columnGroups: statistics.groups,
          ...(statistics.raoScott ? { raoScott: statistics.raoScott.map(raoScottJson) } : {}),
          ...(statistics.raoScottNotDefined?.length ? { raoScottNotDefined: statistics.raoScottNotDefined } : {}),
          ...(statistics.designEffectNotDefined ? { designEffectNotDefined: statistics.designEffectNotDefined } : {}),
        }
      : {}),
  };
}
