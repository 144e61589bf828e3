// A table-answer worker (piscina): the statistics and the answer's bytes of one table, off
// the thread that serves requests. Bundled as dist/report/table-worker.js.
//
// In: a RenderTask (table-render.ts): the table as plain data (no methods) and the answer's options.
// Out: the answer's bytes (moved, not copied), or { error: {code, message, details} } for a
//   CrosstabError (a refusal the caller turns back into one).
import { move } from 'piscina';
import { isCrosstabError } from '../errors.js';
import { writeTableAnswer } from './table-answer.js';
import { revivedTable, type RenderTask } from './table-render-task.js';
import { revivedTabbook, tabbookXLSXBytes, type TabbookTask } from './tabbook-bytes.js';

export default async function render(task: RenderTask | TabbookTask): Promise<unknown> {
  try {
    // A tab book's workbook (its statistics were computed with its tables).
    const bytes = 'book' in task ? await tabbookXLSXBytes(revivedTabbook(task.book), task.layout, task.maxBytes) : await writeTableAnswer(revivedTable(task.table), task.options);
    return move(bytes.buffer as ArrayBuffer);
  } catch (error) {
    if (isCrosstabError(error)) return { error: error.toJSON() };
    throw error;
  }
}
