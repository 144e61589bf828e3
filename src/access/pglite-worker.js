/**
 * The embedded database's thread. PGlite runs Postgres compiled to WebAssembly on the thread
 * that calls it; on the event-loop thread of `crosstab serve` it took 40% of that thread
 * under load (every billed call is a row). Here it runs on its own thread: the main thread
 * sends SQL and gets rows back, one statement at a time, in the order sent.
 * Plain JavaScript so that the same file runs under the test runner (from src/) and from
 * the bundle (dist/).
 *
 * Messages in: { id, sql, params } (a statement), { id, copy, data } (`COPY ... FROM STDIN`
 * with `data` in COPY's text format) or { id, close: true }.
 * Messages out: { ready: true } or { fatal: message } once; then { id, rows } (a COPY:
 * { id, rows: [], count }) or { id, error: { message, code, detail } } per statement.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite, protocol } from '@electric-sql/pglite';

const port = parentPort;
if (port === null) throw new Error('pglite-worker runs as a worker thread of openDatabase().');

const { path } = workerData;
let db;
try {
  db = await PGlite.create(path);
  port.postMessage({ ready: true });
} catch (error) {
  port.postMessage({ fatal: error.message });
  process.exit(0);
}

const encoder = new TextEncoder();

/**
 * A COPY FROM STDIN as one protocol message (Query, CopyData, CopyDone) in one call into
 * Postgres: no Parse/Describe/Bind round trips as query() makes (six calls into the
 * WebAssembly per statement), and COPY inserts rows a page at a time (heap_multi_insert).
 * On an error Postgres sends ErrorResponse and ReadyForQuery and ignores the rest of the
 * copy data, so nothing of the batch is inserted and the session is ready for the next one.
 */
async function copyFrom(statement, data) {
  const parts = [protocol.serialize.query(statement), protocol.serialize.copyData(encoder.encode(data)), protocol.serialize.copyDone()];
  const message = new Uint8Array(parts.reduce((length, part) => length + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    message.set(part, offset);
    offset += part.length;
  }
  // The raw reply, read here: PGlite's own protocol parser costs more than the few messages
  // of a COPY's answer need (CommandComplete or ErrorResponse, then ReadyForQuery).
  const chunks = [];
  await db.execProtocolRawStream(message, { onRawData: (bytes) => chunks.push(bytes.slice()) });
  const reply = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
  const view = new DataView(reply.buffer, reply.byteOffset, reply.byteLength);
  let count;
  for (let at = 0; at + 5 <= reply.length; at += 1 + view.getInt32(at + 1)) {
    const type = reply[at];
    const body = reply.subarray(at + 5, at + 1 + view.getInt32(at + 1));
    if (type === 0x45) throw databaseError(body); // 'E'
    if (type === 0x43) count = Number(textDecoder.decode(body.subarray(0, body.length - 1)).split(' ')[1]); // 'C': "COPY n"
  }
  if (count === undefined) throw new Error(`${statement} did not complete.`);
  return count;
}

const textDecoder = new TextDecoder();

/** An ErrorResponse's fields (a code byte and a string each): message, SQLSTATE and detail, as PGlite's errors have them. */
function databaseError(body) {
  const fields = {};
  for (let at = 0; at < body.length && body[at] !== 0; ) {
    const end = body.indexOf(0, at + 1);
    fields[String.fromCharCode(body[at])] = textDecoder.decode(body.subarray(at + 1, end));
    at = end + 1;
  }
  return Object.assign(new Error(fields.M ?? 'The database refused the statement.'), { code: fields.C, detail: fields.D });
}

// One statement at a time, in arrival order: a transaction's BEGIN, its statements and its
// COMMIT arrive in order because the main thread's queue sends them so.
let chain = Promise.resolve();
port.on('message', (message) => {
  chain = chain.then(async () => {
    if (message.close === true) {
      await db.close();
      port.postMessage({ id: message.id, rows: [] });
      port.close();
      return;
    }
    try {
      if (message.copy !== undefined) {
        port.postMessage({ id: message.id, rows: [], count: await copyFrom(message.copy, message.data) });
        return;
      }
      const result = await db.query(message.sql, message.params ?? []);
      port.postMessage({ id: message.id, rows: result.rows });
    } catch (error) {
      port.postMessage({ id: message.id, error: { message: error.message, code: error.code, detail: error.detail } });
    }
  });
});
