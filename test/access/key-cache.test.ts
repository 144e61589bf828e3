// The key cache of DbKeyStore on a real (embedded) database, with a stepped clock, so the
// bounds are checked exactly, not against wall-clock timing:
// - a change committed in the database (a revocation, a new key) is seen by every lookup
//   made ttlMs or more after it, whether the rights were cached or a lookup was in flight;
// - an unknown key is remembered as unknown for less than ttlMs (so a new key works within
//   the same bound), and a flood of unknown keys evicts neither known keys nor the whole cache;
// - invalidate() (a change made by this process) applies to every later lookup, even with a
//   lookup in flight that read the database before the change.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addAccount, addKey, DbKeyStore, openDatabase, parseLicences, revokeKey, type Database, type Queryable } from '../../src/access/index.js';
import { generateApiKey, hashApiKey, type ApiKeyRecord } from '../../src/http/index.js';
import { tempDir } from '../http/support.js';
import { newEmbeddedFolder } from '../support/embedded-template.js';

const TTL = 500;
let db: Database;
let accountId: string;

beforeAll(async () => {
  db = await openDatabase(await newEmbeddedFolder(join(tempDir('crosstab-key-cache-'), 'db')));
  accountId = (await addAccount(db, 'acme', parseLicences(['GSS'], ['GSS:_ALL_']))).id;
});
afterAll(() => db?.close());

/** A clock the test moves by hand. */
function steppedClock(): { now: () => number; advance: (ms: number) => void } {
  let time = 1_000_000;
  return { now: () => time, advance: (ms) => (time += ms) };
}

/** The database, with the answers of key lookups held until the test releases them. */
function heldLookups(): { db: Queryable; release: () => void; held: () => number } {
  let gates: Array<() => void> = [];
  let held = 0;
  return {
    db: {
      async query<Row>(sql: string, params?: readonly unknown[]) {
        const result = await db.query<Row>(sql, params);
        if (!sql.includes('FROM api_keys k')) return result;
        held++;
        await new Promise<void>((resolve) => gates.push(resolve));
        return result;
      },
    },
    release: () => {
      for (const open of gates.splice(0)) open();
    },
    held: () => held,
  };
}

const valid = (record: ApiKeyRecord | undefined): boolean => record !== undefined && !record.revoked;
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

describe('DbKeyStore: how stale a key lookup can be', () => {
  it('cached rights are reused for less than ttlMs after their query was sent, never longer', async () => {
    const { apiKey, key } = await addKey(db, { account: 'acme', name: 'cached' });
    const clock = steppedClock();
    const store = new DbKeyStore(db, { ttlMs: TTL, clock: clock.now });
    expect(valid(await store.lookup(apiKey))).toBe(true);
    await revokeKey(db, accountId, key.id);
    clock.advance(TTL - 1);
    // Within the bound the cached rights may still be used (synchronously: no query).
    const cached = store.lookup(apiKey);
    expect(cached instanceof Promise).toBe(false);
    expect(valid(cached as ApiKeyRecord)).toBe(true);
    clock.advance(1);
    expect(valid(await store.lookup(apiKey))).toBe(false);
  });

  it('a lookup in flight for ttlMs or more is not joined: a later request reads the database again', async () => {
    const { apiKey, key } = await addKey(db, { account: 'acme', name: 'in-flight' });
    const clock = steppedClock();
    const gate = heldLookups();
    const store = new DbKeyStore(gate.db, { ttlMs: TTL, clock: clock.now });
    const first = store.lookup(apiKey) as Promise<ApiKeyRecord | undefined>;
    await settle();
    expect(gate.held()).toBe(1);
    // The first lookup read the database before the revocation; its answer is late.
    await revokeKey(db, accountId, key.id);
    clock.advance(TTL);
    const later = store.lookup(apiKey) as Promise<ApiKeyRecord | undefined>;
    await settle();
    expect(gate.held()).toBe(2);
    gate.release();
    expect(valid(await first)).toBe(true);
    expect(valid(await later)).toBe(false);
    // The late answer of the first lookup does not replace the younger one in the cache.
    expect(valid((await store.lookup(apiKey)) as ApiKeyRecord | undefined)).toBe(false);
  });

  it('invalidate() applies to every later lookup, even when a lookup that read the old rights is still in flight', async () => {
    const { apiKey, key } = await addKey(db, { account: 'acme', name: 'invalidated' });
    const clock = steppedClock();
    const gate = heldLookups();
    const store = new DbKeyStore(gate.db, { ttlMs: TTL, clock: clock.now });
    const first = store.lookup(apiKey) as Promise<ApiKeyRecord | undefined>;
    await settle();
    await revokeKey(db, accountId, key.id);
    store.invalidate();
    const later = store.lookup(apiKey);
    await settle();
    gate.release();
    expect(valid(await first)).toBe(true);
    expect(valid(await later)).toBe(false);
    expect(valid(await store.lookup(apiKey))).toBe(false);
  });

  it('an unknown key is remembered as unknown for less than ttlMs: a key created meanwhile works from then on', async () => {
    const clock = steppedClock();
    const store = new DbKeyStore(db, { ttlMs: TTL, clock: clock.now });
    // A key that does not exist yet, then is created with exactly that value.
    const apiKey = generateApiKey();
    expect(await store.lookup(apiKey)).toBeUndefined();
    const { key } = await addKey(db, { account: 'acme', name: 'created-later' });
    await db.query('UPDATE api_keys SET hash = $2 WHERE id = $1', [key.id, hashApiKey(apiKey)]);
    clock.advance(TTL - 1);
    expect(store.lookup(apiKey)).toBeUndefined();
    clock.advance(1);
    expect(valid(await store.lookup(apiKey))).toBe(true);
  });

  it('a flood of unknown keys evicts neither the known keys nor the whole cache, and is itself bounded', async () => {
    const { apiKey } = await addKey(db, { account: 'acme', name: 'flooded' });
    const clock = steppedClock();
    let lookups = 0;
    const counting: Queryable = {
      query: (sql, params) => {
        if (sql.includes('FROM api_keys k')) lookups++;
        return db.query(sql, params);
      },
    };
    const store = new DbKeyStore(counting, { ttlMs: TTL, clock: clock.now, maxEntries: 20, maxUnknownEntries: 20 });
    expect(valid(await store.lookup(apiKey))).toBe(true);
    const unknown = Array.from({ length: 60 }, () => generateApiKey());
    for (const attempt of unknown) expect(await store.lookup(attempt)).toBeUndefined();
    expect(lookups).toBe(61);
    // Still cached: answered at once, without a query.
    expect(store.knows(apiKey)).toBe(true);
    expect(store.lookup(apiKey) instanceof Promise).toBe(false);
    // The 20 most recent unknown keys are remembered; older ones are looked up again.
    expect(store.lookup(unknown.at(-1)!)).toBeUndefined();
    await store.lookup(unknown[0]!);
    expect(lookups).toBe(62);
  });
});
