/**
 * The embedded database's thread. PGlite runs Postgres compiled to WebAssembly on the thread
 * that calls it; on the event-loop thread of `crosstab serve` it took 40% of that thread
 * under load (every billed call is a row). Here it runs on its own thread: the main thread
 * sends SQL and gets rows back, one statement at a time, in the order sent.
 * Plain JavaScript so that the same file runs under the test runner (from src/) and from
 * the bundle (dist/).
 *
 * Messages in: { id, sql, params } (a statement) or { id, close: true }.
 * Messages out: { ready: true } or { fatal: message } once; then { id, rows } or
 * { id, error: { message, code, detail } } per statement.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';

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
      const result = await db.query(message.sql, message.params ?? []);
      port.postMessage({ id: message.id, rows: result.rows });
    } catch (error) {
      port.postMessage({ id: message.id, error: { message: error.message, code: error.code, detail: error.detail } });
    }
  });
});
