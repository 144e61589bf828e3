/** What a table-answer worker is sent: the table without its methods, and the answer's options. */
import { stabilityOf } from '../facade/dataset-info.js';
import type { MessagePort } from 'node:worker_threads';
import type { Cell, TableResult } from '../facade/types.js';
import type { TableAnswerOptions } from './table-answer.js';

/** A TableResult as structured clone carries it: every field but `cell()`. */
export type PlainTable = Omit<TableResult, 'cell'>;

export interface RenderTask {
  table: PlainTable;
  options: TableAnswerOptions;
  /** Streams a JSON or CSV answer over this port (table-stream.ts) instead of answering its bytes. */
  port?: MessagePort;
}

/**
 * The table's fields, its cells' typed arrays copied into buffers of their own (a table's
 * arrays may be views of the kernel's shared memory, which another query may reuse).
 */
export function plainTable(result: TableResult): PlainTable {
  const { cell: _cell, ...fields } = result;
  return { ...fields, weighted: result.weighted.slice(), respondents: result.respondents.slice(), sumSqWeights: result.sumSqWeights.slice() };
}

/** A plain table with its `cell()` again. */
export function revivedTable(table: PlainTable): TableResult {
  const width = table.columns.length;
  return {
    ...table,
    cell(row: number, column: number): Cell {
      const at = row * width + column;
      const respondents = table.respondents[at]!;
      return { weighted: table.weighted[at]!, respondents, sumSqWeights: table.sumSqWeights[at]!, stability: stabilityOf(respondents, table.stability) };
    },
  };
}
