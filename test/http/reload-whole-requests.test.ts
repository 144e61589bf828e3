// A request that started on a dataset version is answered whole by that version when the
// dataset is replaced meanwhile (handler.replaceDataset, then the old version's close({ drain:
// true }), as `crosstab serve` reloads): a tab book whose tables were not all started, a
// crosstab and a table still reading their saved audiences. Before, the drain waited only for
// the engine calls running at that moment, and the request's next call was refused: 503 "The
// service is shutting down" from a service that was not.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDataset, type Dataset } from '../../src/index.js';
import { createCrosstabHandler, listen, type CrosstabHandler, type RunningServer } from '../../src/http/index.js';
import { addAccount, addKey, createAudience, DbAudienceStore, DbKeyStore, DbUsageSink, openDatabase, parseLicences, type Database } from '../../src/access/index.js';
import { writeWave } from '../support/survey-waves.js';
import { tempDir } from './support.js';
import { newEmbeddedFolder } from '../support/embedded-template.js';

const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

describe('a dataset replaced while requests run on it', () => {
  let db: Database;
  let key: string;
  let files: string[];
  let handler: CrosstabHandler;
  let server: RunningServer;
  let served: Dataset;
  /** While set, the audience store's lookups wait for it (a slow accounts database). */
  let gate: { reached: () => void; open: Promise<void> } | undefined;

  beforeAll(async () => {
    db = await openDatabase(await newEmbeddedFolder(join(tempDir('crosstab-reload-whole-'), 'db')));
    const account = await addAccount(db, 'acme', parseLicences(['WAVES'], ['WAVES:_ALL_']));
    key = (await addKey(db, { account: 'acme', name: 'etl' })).apiKey;
    await createAudience(db, { accountId: account.id }, { survey: 'WAVES', name: 'north', expression: 'region=N', label: null, shared: true }, 10);
    files = [await writeWave(40_000), await writeWave(41_000)];
    served = await openDataset(files[0]!, { cellCache: 0 });
    const store = new DbAudienceStore(db);
    const byNames = store.byNames.bind(store);
    store.byNames = async (...args) => {
      const waiting = gate;
      if (waiting !== undefined) {
        waiting.reached();
        await waiting.open;
      }
      return byNames(...args);
    };
    handler = await createCrosstabHandler({ datasets: [served], keys: new DbKeyStore(db), usage: new DbUsageSink(db), audiences: store });
    server = await listen(handler, { port: 0 });
  });
  afterAll(async () => {
    await server?.close();
    await served?.close();
    await db?.close();
  });

  /** Serves the other file in place of the served one and closes the old version with a drain (as serve's reload does). */
  async function swap(): Promise<{ old: string; drained: Promise<void> }> {
    const next = await openDataset(files[served === undefined || files.length === 0 ? 0 : (swaps++ % 2 === 0 ? 1 : 0)]!, { cellCache: 0 });
    const old = handler.replaceDataset!(next) as Dataset;
    served = next;
    return { old: old.info.checksum, drained: old.close({ drain: true }) };
  }
  let swaps = 0;

  const post = (path: string, body: unknown, accept = 'application/json') =>
    fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', accept, 'service-engine-authorizer': key }, body: JSON.stringify({ SurveyCode: 'WAVES', ...(body as object) }) });

  /** Sends a request whose audience lookup waits; swaps the dataset while it waits; then lets it go on. */
  async function swappedWhileReadingAudiences(send: () => Promise<Response>): Promise<{ response: Response; text: string; old: string }> {
    let reached!: () => void;
    let open!: () => void;
    const arrived = new Promise<void>((resolve) => (reached = resolve));
    gate = { reached, open: new Promise<void>((resolve) => (open = resolve)) };
    const pending = send();
    await arrived;
    const { old, drained } = await swap();
    gate = undefined;
    open();
    const response = await pending;
    const text = await response.text();
    await drained;
    return { response, text, old };
  }

  it('a crosstab reading its audiences when the dataset is replaced is answered by the version it started on', async () => {
    const { response, text, old } = await swappedWhileReadingAudiences(() => post('/crosstab', { PopulationBaseCode: '@north', TargetCodes: ['brand=A'] }));
    expect(response.status, text).toBe(200);
    expect(response.headers.get('x-dataset-version')).toBe(old);
    const fresh = await openDataset(files[0]!, { cellCache: 0 });
    const oldVersion = fresh.info.checksum === old ? fresh : await openDataset(files[1]!, { cellCache: 0 });
    const expected = await oldVersion.crosstab({ base: '(region=N)', targets: ['brand=A'] });
    expect(JSON.parse(text).Results[0].Resps).toBe(expected.targets[0]!.respondents);
    await Promise.all([fresh.close(), oldVersion.close()]);
  });

  it('a table reading its audiences when the dataset is replaced is answered by the version it started on', async () => {
    const { response, text, old } = await swappedWhileReadingAudiences(() => post('/tables', { PopulationBaseCode: '@north', Rows: [{ Variable: 'brand' }], Columns: [{ Variable: 'region' }] }));
    expect(response.status, text).toBe(200);
    expect(response.headers.get('x-dataset-version')).toBe(old);
  });

  it('a table whose dataset is replaced between its survey lookup and its audiences answers with the figures of the version it looked up, not a mixture', async () => {
    const query = { PopulationBaseCode: '@north', Rows: [{ Variable: 'brand' }], Columns: ['age=18..40', '@north', { Variable: 'region' }] };
    // The same table, unswapped, on each version: the answers the swapped request may give.
    const first = await post('/tables', query);
    const firstText = await first.text();
    expect(first.status, firstText).toBe(200);
    const { response, text, old } = await swappedWhileReadingAudiences(() => post('/tables', query));
    const second = await post('/tables', query);
    const secondText = await second.text();
    expect(second.status, secondText).toBe(200);
    expect(first.headers.get('x-dataset-version')).toBe(old);
    expect(second.headers.get('x-dataset-version')).not.toBe(old);
    // The versions give different figures, so the answer tells which one made it.
    expect(secondText).not.toBe(firstText);
    expect(response.status, text).toBe(200);
    expect(response.headers.get('x-dataset-version')).toBe(old);
    expect(text).toBe(firstText);
  });

  it('a tab book running when the dataset is replaced is answered whole by the version it started on', async () => {
    const before = served.info.checksum;
    const book = post('/tabbooks', { Banner: ['region', 'brand', 'age=18..30', 'age=31..50', 'age=51..'], Stubs: ['brand', 'region', 'age', 'brand', 'region', 'age', 'brand', 'region'], Statistics: ['vpct'] }, XLSX);
    // The swap once the book has started its tables.
    for (let i = 0; i < 10_000 && served.pendingCalls === 0; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(served.pendingCalls, 'the tab book started').toBeGreaterThan(0);
    const { old, drained } = await swap();
    const response = await book;
    const text = response.status === 200 ? '' : await response.text();
    expect(response.status, text).toBe(200);
    expect(response.headers.get('x-dataset-version')).toBe(before);
    expect(old).toBe(before);
    await drained;
  });

  it('a drain still ends at its time limit: a request held past it is stopped (503), and the old version is released', async () => {
    let reached!: () => void;
    let open!: () => void;
    const arrived = new Promise<void>((resolve) => (reached = resolve));
    gate = { reached, open: new Promise<void>((resolve) => (open = resolve)) };
    const pending = post('/crosstab', { PopulationBaseCode: '@north', TargetCodes: ['brand=A'] });
    await arrived;
    const next = await openDataset(files[swaps++ % 2 === 0 ? 1 : 0]!, { cellCache: 0 });
    const old = handler.replaceDataset!(next) as Dataset;
    served = next;
    await old.close({ drain: true, timeoutMs: 50 });
    gate = undefined;
    open();
    const response = await pending;
    const text = await response.text();
    expect(response.status, text).toBe(503);
    // The server's state, said as such: not a fault of the audience, and no server path.
    expect(JSON.parse(text).error.code).toBe('unavailable');
    expect(text).not.toMatch(/no longer fits|\.arrow|\/tmp/);
  });
});
