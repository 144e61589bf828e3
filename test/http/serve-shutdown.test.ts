// `crosstab serve` shutdown has one deadline (--shutdown-timeout, default 10 s) for the
// connections and the handler's close: a table answer being streamed at SIGTERM to a reader
// that is slow past the default's 10 s is delivered whole within a longer deadline, and one
// whose reader stalled is cut at the deadline and counted in the handler_closed event. A real
// server process, a real client over loopback.
import { existsSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { addApiKey } from '../../src/http/index.js';
import { CLI, startServe, type ServeChild } from './serve-child.js';
import { tempDir } from './support.js';

const paths = inject('testDatasets');

/** Every respondent by year and sex: about 24 MB of JSON, far more than the socket buffers hold. */
const LARGE = { SurveyCode: 'GSS', PopulationBaseCode: '*', Rows: [{ Variable: 'id' }], Columns: [{ Variable: 'year' }, { Variable: 'sex' }], Statistics: ['vpct', 'hpct'] };

interface OpenAnswer {
  res: IncomingMessage;
  length: number;
  /** Resolves when the response has ended (whole) or was cut, with the body received. */
  settled: Promise<{ whole: boolean; body: Buffer }>;
}

/** A POST /tables whose response is paused once its first bytes arrive (the client stops reading). */
function openTable(origin: string, key: string): Promise<OpenAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${origin}/v1/tables`, { method: 'POST', headers: { 'content-type': 'application/json', 'service-engine-authorizer': key }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      let ended = false;
      const settled = new Promise<{ whole: boolean; body: Buffer }>((done) => {
        res.on('end', () => (ended = true));
        res.on('close', () => done({ whole: ended, body: Buffer.concat(chunks) }));
        res.on('error', () => {});
      });
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.once('data', () => {
        res.pause();
        resolve({ res, length: Number(res.headers['content-length']), settled });
      });
      if (res.statusCode !== 200) reject(new Error(`POST /v1/tables answered ${res.statusCode}`));
    });
    req.on('error', reject);
    req.end(JSON.stringify(LARGE));
  });
}

const handlerClosed = (serve: ServeChild): string | undefined => /"event":"handler_closed","message":"([^"]*)"/.exec(serve.errors())?.[1];
const shutdownEvent = (serve: ServeChild): boolean => /"event":"shutdown"/.test(serve.errors());

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 50));
}

describe('crosstab serve: one shutdown deadline', () => {
  let dir: string;
  let keyFile: string;
  let key: string;

  beforeAll(async () => {
    expect(existsSync(CLI), `${CLI} is missing: run \`npm run build\` first`).toBe(true);
    dir = tempDir('crosstab-serve-shutdown-');
    keyFile = join(dir, 'keys.json');
    key = (await addApiKey(keyFile, { surveys: ['GSS'], groups: ['_ALL_'], name: 'reader' })).apiKey;
  });

  const start = (extra: string[]): Promise<ServeChild> =>
    startServe(['--dataset', paths.gss, '--keys', keyFile, '--ledger', join(dir, `usage-${Date.now()}.ndjson`), '--port', '0', ...extra], { cwd: dir });

  it('delivers an answer whose reader resumes after 12 s whole within --shutdown-timeout 60000, and exits 0 with nothing cut', async () => {
    const serve = await start(['--shutdown-timeout', '60000']);
    const answer = await openTable(serve.origin, key);
    let exited = false;
    void serve.exited.then(() => (exited = true));
    serve.child.kill('SIGTERM');
    await until(() => shutdownEvent(serve));
    expect(serve.errors()).toMatch(/SIGTERM, draining in-flight requests \(at most 60000 ms, --shutdown-timeout\)/);
    // Past the 10 s after which the connection used to be cut.
    await new Promise((resolve) => setTimeout(resolve, 12_000));
    expect(exited).toBe(false);
    answer.res.resume();
    const { whole, body } = await answer.settled;
    expect(whole).toBe(true);
    expect(body.byteLength).toBe(answer.length);
    expect(() => JSON.parse(body.toString('utf8'))).not.toThrow();
    expect(await serve.exited).toBe(0);
    expect(handlerClosed(serve)).toMatch(/ 0 answers cut/);
  }, 180_000);

  it('cuts an answer whose reader stalled at the default deadline (10 s), counts it, and exits 0', async () => {
    const serve = await start([]);
    const answer = await openTable(serve.origin, key);
    serve.child.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
    expect(serve.errors()).toMatch(/at most 10000 ms/);
    // The reader reads again: the answer ended short.
    answer.res.resume();
    const { whole, body } = await answer.settled;
    expect(whole).toBe(false);
    expect(body.byteLength).toBeLessThan(answer.length);
    expect(handlerClosed(serve)).toMatch(/ 1 answers cut at the close time limit/);
    // The time the shutdown waited, not the handler's own 0 ms at the deadline.
    expect(Number(/\(after (\d+) ms\)/.exec(handlerClosed(serve) ?? '')?.[1])).toBeGreaterThanOrEqual(10_000);
  }, 180_000);

  it('refuses a --shutdown-timeout that is not a whole number of milliseconds', async () => {
    await expect(start(['--shutdown-timeout', '2.5'])).rejects.toThrow(/--shutdown-timeout must be an integer from 0 to 2147483647; got "2.5"/);
  }, 60_000);
});
