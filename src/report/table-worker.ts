// A table-answer worker (piscina): the statistics and the answer's bytes of one table, off
// the thread that serves requests. Bundled as dist/report/table-worker.js.
//
// In: a RenderTask (table-render.ts): the table as plain data (no methods) and the answer's
//   options; with a `port`, a JSON or CSV answer is streamed over it (table-stream.ts).
// Out: the answer's bytes (moved, not copied), `true` once a streamed answer has been sent or
//   cancelled, or { error: {code, message, details} } for a CrosstabError (a refusal the
//   caller turns back into one).
import type { MessagePort } from 'node:worker_threads';
import { move } from 'piscina';
import { isCrosstabError } from '../errors.js';
import { prepareTextAnswer, writeTableAnswer, type TextAnswer } from './table-answer.js';
import { revivedTable, type RenderTask } from './table-render-task.js';
import { STREAM_CHUNK_BYTES, STREAM_WINDOW_CHUNKS, type MainStreamMessage, type WorkerStreamMessage } from './table-stream.js';
import { revivedTabbook, tabbookXLSXBytes, type TabbookTask } from './tabbook-bytes.js';

export default async function render(task: RenderTask | TabbookTask): Promise<unknown> {
  try {
    // A tab book's workbook (its statistics were computed with its tables).
    if ('book' in task) {
      const bytes = await tabbookXLSXBytes(revivedTabbook(task.book), task.layout, task.maxBytes);
      return move(bytes.buffer as ArrayBuffer);
    }
    if (task.port === undefined) {
      const bytes = await writeTableAnswer(revivedTable(task.table), task.options);
      return move(bytes.buffer as ArrayBuffer);
    }
    const answer = prepareTextAnswer(revivedTable(task.table), task.options);
    await stream(answer, task.port);
    return true;
  } catch (error) {
    if (isCrosstabError(error)) return { error: error.toJSON() };
    throw error;
  } finally {
    if (!('book' in task)) task.port?.close();
  }
}

/** Sends `answer` over `port` once told to, a window of chunks at a time (table-stream.ts). */
async function stream(answer: TextAnswer, port: MessagePort): Promise<void> {
  let credit = STREAM_WINDOW_CHUNKS;
  let going = false;
  let cancelled = false;
  let wake: (() => void) | undefined;
  port.on('message', (message: MainStreamMessage) => {
    if ('go' in message) going = true;
    else if ('credit' in message) credit += message.credit;
    else cancelled = true;
    wake?.();
  });
  port.on('close', () => {
    cancelled = true;
    wake?.();
  });
  const wait = () => new Promise<void>((resolve) => (wake = resolve));
  const post = (message: WorkerStreamMessage, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);
  post({ size: answer.byteLength });
  while (!going && !cancelled) await wait();
  let chunk = new Uint8Array(STREAM_CHUNK_BYTES);
  let filled = 0;
  const send = async () => {
    while (credit === 0 && !cancelled) await wait();
    if (cancelled) return;
    credit--;
    const bytes = chunk.buffer.byteLength === filled ? chunk.buffer : chunk.slice(0, filled).buffer;
    post({ chunk: bytes as ArrayBuffer }, [bytes as ArrayBuffer]);
    chunk = new Uint8Array(STREAM_CHUNK_BYTES);
    filled = 0;
  };
  for (const piece of answer.pieces()) {
    const encoded = Buffer.from(piece, 'utf8');
    for (let at = 0; at < encoded.length && !cancelled; ) {
      const take = Math.min(encoded.length - at, STREAM_CHUNK_BYTES - filled);
      chunk.set(encoded.subarray(at, at + take), filled);
      filled += take;
      at += take;
      if (filled === STREAM_CHUNK_BYTES) await send();
    }
    if (cancelled) return;
  }
  if (filled > 0) await send();
  if (cancelled) return;
  post({ end: true });
  // The task's answer and the port's messages travel apart: it ends only once the main thread has
  // read the end (and closed the port), so the task's end never overtakes the last chunks.
  while (!cancelled) await wait();
}
