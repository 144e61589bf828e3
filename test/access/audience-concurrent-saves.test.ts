// Saves of audiences that run at the same time, on two replicas (two connection pools on one
// PostgreSQL database) or as two requests of one process on the embedded database: what a
// save checks against the other audiences (no cycle, the audiences it uses there) holds for
// what is committed, not only for what each save read before the other wrote. The writes are
// interleaved deterministically (also on a server whose transactions default to a snapshot
// taken at their first statement, before they wait for the lock): replica 1's write waits until replica 2's save has checked
// and reached its own write, so both checks read the audiences as they were before either.
// And an account that holds a cycle (saved before saves were checked under the account's
// lock) is told what to do, and can undo it with PUT or DELETE.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { join } from 'node:path';
import { openDataset, type Dataset } from '../../src/index.js';
import { createCrosstabHandler, listen, type RunningServer } from '../../src/http/index.js';
import { addAccount, addKey, DbAudienceStore, DbKeyStore, DbUsageSink, openDatabase, parseLicences, updateAudience, type Database } from '../../src/access/index.js';
import type { AudienceCheck, AudienceInput, AudienceRecord, AudienceRefusal, AudienceViewer } from '../../src/keys/index.js';
import { tempDir } from '../http/support.js';
import { startPostgres, type PostgresServer } from './postgres-server.js';
import { newEmbeddedFolder } from '../support/embedded-template.js';

const paths = inject('testDatasets');
let postgres: PostgresServer;
let gss: Dataset;

beforeAll(async () => {
  postgres = await startPostgres();
  gss = await openDataset(paths.gss);
});
afterAll(async () => {
  await gss?.close();
  postgres?.stop();
});

/** A replica's audience store whose next create or update first runs `before` (to hold it, or to let another one go). */
class HeldStore extends DbAudienceStore {
  private before: (() => Promise<void> | void) | undefined;
  beforeNextWrite(run: () => Promise<void> | void): void {
    this.before = run;
  }
  private async turn(): Promise<void> {
    const before = this.before;
    this.before = undefined;
    await before?.();
  }
  override async create<Refusal>(viewer: AudienceViewer, input: AudienceInput, check?: AudienceCheck<Refusal>): Promise<AudienceRecord | AudienceRefusal | Refusal> {
    await this.turn();
    return super.create(viewer, input, check);
  }
  override async update<Refusal>(viewer: AudienceViewer, id: string, input: AudienceInput, check?: AudienceCheck<Refusal>): Promise<AudienceRecord | AudienceRefusal | Refusal | undefined> {
    await this.turn();
    return super.update(viewer, id, input, check);
  }
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

interface Answer {
  status: number;
  body: any;
  text: string;
}

interface Replica {
  db: Database;
  store: HeldStore;
  server: RunningServer;
}

// Embedded: one process holds the folder, so the two "replicas" are two handlers on one database.
const stores: Array<[string, () => Promise<[Database, Database]>]> = [
  [
    'embedded PGlite',
    async () => {
      const db = await openDatabase(await newEmbeddedFolder(join(tempDir('crosstab-audience-saves-'), 'db')));
      return [db, db];
    },
  ],
  [
    'PostgreSQL server',
    async () => {
      const url = await postgres.createDatabase(`audience_saves_${Date.now()}`);
      return [await openDatabase(url), await openDatabase(url)];
    },
  ],
  [
    'PostgreSQL server whose transactions default to REPEATABLE READ',
    async () => {
      const name = `audience_saves_rr_${Date.now()}`;
      const url = await postgres.createDatabase(name);
      const setup = await openDatabase(url);
      await setup.query(`ALTER DATABASE "${name}" SET default_transaction_isolation TO 'repeatable read'`);
      await setup.close();
      return [await openDatabase(url), await openDatabase(url)];
    },
  ],
];

describe.each(stores)('concurrent audience saves on %s', (_name, open) => {
  const replicas: Replica[] = [];
  let apiKey = '';
  let accountDb: Database;
  let accountId = '';

  beforeAll(async () => {
    const dbs = await open();
    accountDb = dbs[0];
    accountId = (await addAccount(accountDb, 'acme', parseLicences(['GSS'], ['GSS:_ALL_']))).id;
    apiKey = (await addKey(accountDb, { account: 'acme', name: 'etl' })).apiKey;
    for (const db of dbs) {
      const store = new HeldStore(db);
      const handler = await createCrosstabHandler({ datasets: [gss], keys: new DbKeyStore(db, { ttlMs: 0 }), usage: new DbUsageSink(db), audiences: store });
      replicas.push({ db, store, server: await listen(handler, { port: 0 }) });
    }
  });
  afterAll(async () => {
    for (const replica of replicas) await replica.server.close();
    await replicas[0]?.db.close();
    if (replicas[1]?.db !== replicas[0]?.db) await replicas[1]?.db.close();
  });

  async function call(replica: number, method: string, path: string, body?: unknown): Promise<Answer> {
    const response = await fetch(`${(replicas[replica] as Replica).server.url}${path}`, {
      method,
      headers: { 'service-engine-authorizer': apiKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: text === '' ? undefined : JSON.parse(text), text };
  }
  const save = async (name: string, expression: string): Promise<string> => {
    const saved = await call(0, 'POST', '/audiences', { SurveyCode: 'GSS', Name: name, Expression: expression, Shared: true });
    expect(saved.status, saved.text).toBe(201);
    return saved.body.AudienceId as string;
  };
  const crosstab = (replica: number, targets: string[]) => call(replica, 'POST', '/crosstab', { SurveyCode: 'GSS', PopulationBaseCode: 'year=2024', TargetCodes: targets });
  const listed = async (): Promise<Map<string, any>> => new Map(((await call(1, 'GET', '/audiences?SurveyCode=GSS')).body.Audiences as any[]).map((audience) => [audience.Name, audience]));

  /**
   * Sends `first` on replica 1 and holds its write until `second` (on replica 2) has checked
   * and reached its own write (or, for a DELETE, has answered): both read the audiences as
   * they were before either wrote.
   */
  async function interleaved(first: () => Promise<Answer>, second: () => Promise<Answer>, secondWrites = true): Promise<[Answer, Answer]> {
    const arrived = deferred();
    const go = deferred();
    (replicas[0] as Replica).store.beforeNextWrite(async () => {
      arrived.resolve();
      await go.promise;
    });
    const one = first();
    await arrived.promise;
    if (secondWrites) (replicas[1] as Replica).store.beforeNextWrite(() => go.resolve());
    const two = second();
    if (!secondWrites) void two.then(() => go.resolve());
    return Promise.all([one, two]);
  }

  it('two saves that together would make a cycle: one is saved, the other refused naming the loop', async () => {
    const a = await save('cyc-a', 'sex=1');
    const b = await save('cyc-b', 'sex=2');
    const [first, second] = await interleaved(
      () => call(0, 'PUT', `/audiences/${a}`, { Expression: '@cyc-b AND race=1' }),
      () => call(1, 'PUT', `/audiences/${b}`, { Expression: '@cyc-a OR race=2' }),
    );
    const answers = [first, second].sort((x, y) => x.status - y.status);
    expect(answers.map((answer) => answer.status), `${first.text}\n${second.text}`).toEqual([200, 400]);
    const refused = (answers[1] as Answer).body.error;
    expect(refused.code).toBe('invalid_expression');
    expect(refused.field).toBe('Expression');
    expect(refused.message).toMatch(/Expression: audience @cyc-[ab] uses itself \(@cyc-([ab]) -> @cyc-[ab] -> @cyc-\1\)/);
    // What is committed is usable: each audience answers, on either replica, what its expression written out answers.
    const audiences = await listed();
    expect(audiences.get('cyc-a').Usable && audiences.get('cyc-b').Usable).toBe(true);
    const savedFirst = first.status === 200;
    const meaning = savedFirst ? { a: '((sex=2)) AND race=1', b: 'sex=2' } : { a: 'sex=1', b: '((sex=1)) OR race=2' };
    for (const replica of [0, 1]) {
      const through = await crosstab(replica, ['@cyc-a', '@cyc-b']);
      expect(through.status, through.text).toBe(200);
      const written = await crosstab(replica, [meaning.a, meaning.b]);
      expect(through.body.Results.map((result: any) => [result.WgtAud, result.Resps])).toEqual(written.body.Results.map((result: any) => [result.WgtAud, result.Resps]));
    }
  });

  it('a save that uses an audience deleted meanwhile is refused, naming the audience gone', async () => {
    const used = await save('gone-soon', 'sex=2');
    const user = await save('user-of-gone', 'sex=1');
    const [saved, deleted] = await interleaved(
      () => call(0, 'PUT', `/audiences/${user}`, { Expression: '@gone-soon AND race=1' }),
      () => call(1, 'DELETE', `/audiences/${used}`),
      false,
    );
    expect(deleted.status).toBe(204);
    expect(saved.status, saved.text).toBe(400);
    expect(saved.body.error.code).toBe('unknown_audience');
    expect(saved.body.error.message).toContain('@gone-soon');
    const audiences = await listed();
    expect(audiences.get('user-of-gone')).toMatchObject({ Expression: 'sex=1', Usable: true });
  });

  it('an account that already holds a cycle: a use says which audiences to edit, and PUT or DELETE of one undoes it', async () => {
    const a = await save('old-a', 'sex=1');
    const b = await save('old-b', 'sex=2');
    // As saved before saves were checked under the account's lock: written past the API's checks.
    const viewer = { accountId };
    await updateAudience(accountDb, viewer, a, { survey: 'GSS', name: 'old-a', expression: '@old-b AND race=1', label: null, shared: true });
    await updateAudience(accountDb, viewer, b, { survey: 'GSS', name: 'old-b', expression: '@old-a OR race=2', label: null, shared: true });

    const used = await crosstab(1, ['@old-a']);
    expect(used.status, used.text).toBe(400);
    expect(used.body.error.code).toBe('invalid_expression');
    expect(used.body.error.message).toBe('TargetCodes[0]: audience @old-a uses itself (@old-a -> @old-b -> @old-a)');
    expect(used.body.error.hint).toContain(`PUT /v1/audiences/${a}`);
    expect(used.body.error.hint).toContain(`/v1/audiences/${b}`);
    // Listed, not usable, with their expressions shown so that they can be corrected.
    const audiences = await listed();
    expect(audiences.get('old-a')).toMatchObject({ Expression: '@old-b AND race=1', Usable: false, Editable: true });
    expect(audiences.get('old-b')).toMatchObject({ Expression: '@old-a OR race=2', Usable: false, Editable: true });

    // An edit that keeps the loop is refused saying so; one that breaks it is saved.
    const kept = await call(0, 'PUT', `/audiences/${a}`, { Label: 'Men of race 1' });
    expect(kept.status).toBe(400);
    expect(kept.body.error.message).toBe('Expression: audience @old-a uses itself (@old-a -> @old-b -> @old-a)');
    const fixed = await call(0, 'PUT', `/audiences/${a}`, { Expression: 'sex=1 AND race=1' });
    expect(fixed.status, fixed.text).toBe(200);
    const through = await crosstab(1, ['@old-b']);
    const written = await crosstab(1, ['((sex=1 AND race=1)) OR race=2']);
    expect(through.status, through.text).toBe(200);
    expect(through.body.Results[0].WgtAud).toBe(written.body.Results[0].WgtAud);

    // The same loop again, undone by deleting one of its audiences.
    await updateAudience(accountDb, viewer, a, { survey: 'GSS', name: 'old-a', expression: '@old-b AND race=1', label: null, shared: true });
    expect((await call(1, 'DELETE', `/audiences/${b}`)).status).toBe(204);
    const left = await crosstab(0, ['@old-a']);
    expect(left.body.error.code).toBe('unknown_audience');
    expect((await call(0, 'PUT', `/audiences/${a}`, { Expression: 'sex=1' })).status).toBe(200);
  });
});
