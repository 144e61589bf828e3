// The built-in audience stores (DbAudienceStore on the embedded database and on PostgreSQL)
// read audiences that use audiences in one statement (AudienceStore.closure): a request never
// takes the per-level reads kept for stores without it, which could mix audiences from before
// and after an edit (test/access/audience-snapshot.test.ts).
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDataset, type Dataset } from '../../src/index.js';
import { expandRequestAudiences } from '../../src/http/audience-expansion.js';
import { addAccount, createAudience, DbAudienceStore, openDatabase, parseLicences, type Database } from '../../src/access/index.js';
import type { ApiKeyRecord, AudienceStore } from '../../src/keys/index.js';
import { tempDir } from '../http/support.js';
import { startPostgres, type PostgresServer } from './postgres-server.js';

const paths = inject('testDatasets');
let gss: Dataset;
let postgres: PostgresServer | undefined;

beforeAll(async () => {
  gss = await openDataset(paths.gss);
});
afterAll(async () => {
  await gss?.close();
  await postgres?.stop();
});

const databases: Array<[string, () => Promise<string>]> = [
  ['the embedded database', async () => join(tempDir('crosstab-audience-closure-'), 'db')],
  ['PostgreSQL', async () => (await (postgres ??= await startPostgres()).createDatabase('audience_closure'))],
];

describe.each(databases)('DbAudienceStore on %s', (_name, location) => {
  let db: Database;
  let caller: ApiKeyRecord;

  beforeAll(async () => {
    db = await openDatabase(await location());
    const accountId = (await addAccount(db, 'acme', parseLicences(['GSS'], ['GSS:_ALL_']))).id;
    caller = { id: 'key_test', hash: '', surveys: ['GSS'], groups: ['_ALL_'], createdAt: new Date().toISOString(), revoked: false, accountId };
    // Three levels below the audience named: @north uses @buyers, which uses @graduates, which uses @adults.
    const audiences = [['adults', 'age=18..99'], ['graduates', '@adults AND degree=3..4'], ['buyers', '@graduates AND year=2024'], ['north', '@buyers AND sex=2']];
    for (const [name, expression] of audiences) await createAudience(db, { accountId }, { survey: 'GSS', name: name!, expression: expression!, label: null, shared: true });
  });
  afterAll(() => db?.close());

  it('reads nested audiences with its closure, never one query per level', async () => {
    const store = new DbAudienceStore(db);
    expect(typeof store.closure).toBe('function');
    const calls: string[] = [];
    // The real store, its calls counted: a store without closure is read once per level.
    const counted = new Proxy(store, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (typeof value !== 'function' || (property !== 'byNames' && property !== 'closure')) return value;
        return (...args: unknown[]) => {
          calls.push(property);
          return (value as (...args: unknown[]) => unknown).apply(target, args);
        };
      },
    }) as AudienceStore;
    const expanded = await expandRequestAudiences({ store: counted, caller, dataset: gss, allowedGroups: undefined, expressions: [{ text: '@north', field: 'PopulationBaseCode', label: 'PopulationBaseCode' }], catalog: '' });
    expect(expanded).toEqual(['((((age=18..99) AND degree=3..4) AND year=2024) AND sex=2)']);
    expect(calls).toEqual(['byNames', 'closure']);
  });
});
