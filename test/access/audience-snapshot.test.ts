// Audiences using audiences are read level by level (the ones named, then the ones those use).
// Two edits committed between two of those reads, by another replica, must not give an
// answer no state of the audiences ever gave: every level is read in one statement.
// Here @north is "@buyers AND sex=2" and @buyers "degree=3..4"; a user rewrites @north as
// "degree=3..4 AND sex=2" and then @buyers as "degree=0..1". In every state @north means
// degree=3..4 AND sex=2; read @north before the edits and @buyers after them, it would mean
// degree=0..1 AND sex=2. The edits are made (on a real PostgreSQL server, through another
// connection) after the request named @north and before it read @buyers: between two reads
// of a store read level by level; before the one read of a store that reads the closure.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDataset, type Dataset } from '../../src/index.js';
import { createCrosstabHandler, listen, type RunningServer } from '../../src/http/index.js';
import { addAccount, addKey, DbAudienceStore, DbKeyStore, DbUsageSink, openDatabase, parseLicences, updateAudience, type Database } from '../../src/access/index.js';
import type { AudienceRecord, AudienceViewer } from '../../src/keys/index.js';
import { startPostgres, type PostgresServer } from './postgres-server.js';

const paths = inject('testDatasets');
let postgres: PostgresServer;
let gss: Dataset;
let db: Database;
let server: RunningServer;
let apiKey: string;
let accountId: string;

/**
 * Runs `between` once (when armed) before the first read that asks for @buyers, or before
 * the read of the whole closure: after the request named @north, before it read @buyers.
 */
class EditedBetweenReads extends DbAudienceStore {
  between: (() => Promise<void>) | undefined;
  private async edits(names: readonly string[]): Promise<void> {
    const between = this.between;
    if (between === undefined || !names.includes('buyers')) return;
    this.between = undefined;
    await between();
  }
  override async byNames(viewer: AudienceViewer, survey: string, names: readonly string[]): Promise<AudienceRecord[]> {
    await this.edits(names);
    return super.byNames(viewer, survey, names);
  }
  override async closure(viewer: AudienceViewer, survey: string, names: readonly string[], depth: number): Promise<AudienceRecord[]> {
    await this.edits(['buyers']);
    return super.closure(viewer, survey, names, depth);
  }
}
let store: EditedBetweenReads;

beforeAll(async () => {
  postgres = await startPostgres();
  gss = await openDataset(paths.gss);
  db = await openDatabase(await postgres.createDatabase('audience_snapshot'));
  accountId = (await addAccount(db, 'acme', parseLicences(['GSS'], ['GSS:_ALL_']))).id;
  apiKey = (await addKey(db, { account: 'acme', name: 'production' })).apiKey;
  store = new EditedBetweenReads(db);
  const handler = await createCrosstabHandler({ datasets: [gss], keys: new DbKeyStore(db), usage: new DbUsageSink(db), audiences: store });
  server = await listen(handler, { port: 0 });
}, 60_000);

afterAll(async () => {
  await server?.close();
  await db?.close();
  await gss?.close();
  postgres?.stop();
});

async function call(method: string, path: string, body: unknown): Promise<{ status: number; body: any; text: string }> {
  const response = await fetch(`${server.url}${path}`, { method, headers: { 'service-engine-authorizer': apiKey, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text), text };
}

const crosstab = (targets: string[]) => call('POST', '/crosstab', { SurveyCode: 'GSS', PopulationBaseCode: 'year=2024', TargetCodes: targets });

describe('audiences using audiences, edited during a request', () => {
  it('one request reads every level at one moment: never @north as it was with @buyers as it became', async () => {
    const buyers = await call('POST', '/audiences', { SurveyCode: 'GSS', Name: 'buyers', Expression: 'degree=3..4', Shared: true });
    expect(buyers.status, buyers.text).toBe(201);
    const north = await call('POST', '/audiences', { SurveyCode: 'GSS', Name: 'north', Expression: '@buyers AND sex=2', Shared: true });
    expect(north.status, north.text).toBe(201);
    const meant = await crosstab(['degree=3..4 AND sex=2']);
    const mixed = await crosstab(['degree=0..1 AND sex=2']);
    expect(meant.body.Results).not.toEqual(mixed.body.Results);
    expect((await crosstab(['@north'])).body.Results).toEqual(meant.body.Results);

    const viewer = { accountId };
    store.between = async () => {
      expect(await updateAudience(db, viewer, north.body.AudienceId, { survey: 'GSS', name: 'north', expression: 'degree=3..4 AND sex=2', label: null, shared: true })).toMatchObject({ expression: 'degree=3..4 AND sex=2' });
      expect(await updateAudience(db, viewer, buyers.body.AudienceId, { survey: 'GSS', name: 'buyers', expression: 'degree=0..1', label: null, shared: true })).toMatchObject({ expression: 'degree=0..1' });
    };
    const during = await crosstab(['@north']);
    expect(store.between).toBeUndefined();
    expect(during.status, during.text).toBe(200);
    expect(during.body.Results).toEqual(meant.body.Results);
    // And after the edits, what both say now.
    expect((await crosstab(['@north', '@buyers'])).body.Results).toEqual((await crosstab(['degree=3..4 AND sex=2', 'degree=0..1'])).body.Results);
  });
});
