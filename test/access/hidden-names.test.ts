// A caller without a group learns nothing of it, anywhere: for random expressions built from
// another group's names, codes, value labels and values (misspelt, exact, mixed with the
// caller's own), no answer of the API (POST /crosstab, POST /tables with expressions, whole
// variables and weights) or of the portal (the Tables page's check and its form) names a
// variable, code, value label, value or group outside the caller's groups that the request
// did not name itself. A name of another group gets the answer a made-up name gets. And the
// portal's expression check counts against the account's rate limit.
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDataset, type Dataset } from '../../src/index.js';
import { createCrosstabHandler, listen, type RunningServer } from '../../src/http/index.js';
import { addAccount, addKey, addUser, DbKeyStore, DbUsageSink, openDatabase, parseLicences, type Database } from '../../src/access/index.js';
import { createPortal, mountPortal } from '../../src/portal/index.js';
import { tempDir } from '../http/support.js';
import { cookieOf, csrfOf, postSignIn, send, signInForm } from './portal-client.js';
import { startPostgres, type PostgresServer } from './postgres-server.js';
import { newEmbeddedFolder } from '../support/embedded-template.js';

const paths = inject('testDatasets');
const MINE = 'demographics';

/** Another group's names, codes, labels, values and group names; none of them is also the caller's. */
function hiddenTokens(gss: Dataset): { names: string[]; codes: string[]; labels: string[]; values: string[]; groups: string[]; all: string[] } {
  const info = gss.info;
  const mine = info.variables.filter((variable) => variable.group === MINE);
  const visible = new Set<string>([...mine.flatMap((variable) => [variable.name, variable.label ?? '', ...(variable.values ?? []).flatMap((value) => [value.value, value.label ?? ''])]), ...info.codes.filter((code) => code.group === MINE).flatMap((code) => [code.name, code.label ?? '']), ...info.weights, MINE]);
  // Numbers a visible variable's range holds (ages, years) are the caller's own too.
  const inRange = (text: string) => mine.some((variable) => variable.kind === 'numeric' && Number(text) >= (variable.min ?? Infinity) && Number(text) <= (variable.max ?? -Infinity));
  const hidden = info.variables.filter((variable) => variable.group !== MINE);
  const keep = (tokens: string[]) => [...new Set(tokens)].filter((token) => token.length >= 3 && !visible.has(token) && !inRange(token));
  const names = keep(hidden.map((variable) => variable.name));
  const codes = keep(info.codes.filter((code) => code.group !== MINE).map((code) => code.name));
  const labels = keep(hidden.flatMap((variable) => [variable.label ?? '', ...(variable.values ?? []).map((value) => value.label ?? '')]));
  // Values of five characters or more (4228.5, 0.4446): shorter numbers are everywhere (counts, years).
  const values = keep(hidden.flatMap((variable) => (variable.values ?? []).map((value) => value.value))).filter((value) => value.length >= 5);
  const groups = keep(info.groups.filter((group) => group !== MINE));
  return { names, codes, labels, values, groups, all: [...names, ...codes, ...labels, ...values, ...groups] };
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** The hidden tokens an answer names that its request did not (a name the caller typed may be echoed). */
function leaked(answer: string, request: string, tokens: readonly string[]): string[] {
  const text = answer.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');
  return tokens.filter((token) => !request.includes(token) && new RegExp(`(?<![A-Za-z0-9_.])${escape(token)}(?![A-Za-z0-9_])`).test(text));
}

/** A misspelling: one character dropped, doubled, changed or the case of all changed. */
const misspelt = (word: string) =>
  fc.oneof(
    fc.nat(word.length - 1).map((i) => word.slice(0, i) + word.slice(i + 1)),
    fc.nat(word.length - 1).map((i) => word.slice(0, i) + word[i] + word.slice(i)),
    fc.tuple(fc.nat(word.length - 1), fc.constantFrom('a', 'e', 'x', '1', '_')).map(([i, c]) => word.slice(0, i) + c + word.slice(i + 1)),
    fc.constant(word.toUpperCase() === word ? word.toLowerCase() : word.toUpperCase()),
  );

let postgres: PostgresServer | undefined;
afterAll(() => postgres?.stop());
const stores: Array<[string, () => Promise<string>]> = [
  ['embedded PGlite', async () => newEmbeddedFolder(join(tempDir('crosstab-hidden-'), 'db'))],
  ['PostgreSQL server', async () => (postgres ??= await startPostgres()).createDatabase(`hidden_${Date.now()}`)],
];

describe.each(stores)('nothing of another group in any answer (%s)', (_store, location) => {
  let db: Database;
  let gss: Dataset;
  let server: RunningServer;
  let origin: string;
  let apiKey: string;
  let session: { cookie: string; csrf: string };
  let tokens: ReturnType<typeof hiddenTokens>;

  async function person(account: string, email: string): Promise<{ cookie: string; csrf: string }> {
    const { user, oneTimePassword } = await addUser(db, account, email);
    await db.query('UPDATE users SET must_change_password = false WHERE id = $1', [user.id]);
    const signed = await postSignIn(origin, await signInForm(origin), user.email, oneTimePassword);
    const cookie = cookieOf(signed, 'crosstab_portal') as string;
    return { cookie, csrf: csrfOf(await send(origin, 'GET', '/portal/tables', { cookie })) };
  }
  const api = (path: string, body: unknown, key = apiKey) => fetch(`${origin}/v1${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'service-engine-authorizer': key }, body: JSON.stringify(body) }).then(async (reply) => ({ status: reply.status, body: await reply.text() }));
  const check = (expression: string, kind: string, who = session) => send(origin, 'GET', `/portal/tables/check?survey=GSS&kind=${kind}&expression=${encodeURIComponent(expression)}`, { cookie: who.cookie });

  /** Every answer the caller gets for `expression`, by where it was asked. */
  async function answersTo(expression: string): Promise<Array<[string, { status: number; body: string }]>> {
    const form = new URLSearchParams({ csrf: session.csrf, survey: 'GSS', base: '*', rows: expression, columns: 'sex', weight: '', missing: 'hide', action: 'compute' });
    return [
      ['POST /crosstab', await api('/crosstab', { SurveyCode: 'GSS', PopulationBaseCode: '*', TargetCodes: [expression] })],
      ['POST /crosstab base', await api('/crosstab', { SurveyCode: 'GSS', PopulationBaseCode: expression, TargetCodes: ['sex=1'] })],
      ['POST /tables expression', await api('/tables', { SurveyCode: 'GSS', PopulationBaseCode: '*', Rows: [{ Expression: expression }], Columns: ['sex=1'] })],
      ['POST /tables variable', await api('/tables', { SurveyCode: 'GSS', PopulationBaseCode: '*', Rows: [{ Variable: expression }], Columns: ['sex=1'] })],
      ['POST /tables weight', await api('/tables', { SurveyCode: 'GSS', PopulationBaseCode: '*', Rows: ['sex=1'], Columns: ['sex=2'], Weight: expression })],
      ['check base', await check(expression, 'base')],
      ['check axis', await check(expression, 'axis')],
      ['portal form', await send(origin, 'POST', '/portal/tables', { cookie: session.cookie, form })],
    ];
  }

  beforeAll(async () => {
    db = await openDatabase(await location());
    await addAccount(db, 'acme', parseLicences(['GSS'], [`GSS:${MINE}`]));
    await addAccount(db, 'limited', parseLicences(['GSS'], [`GSS:${MINE}`]), { rateLimitPerMinute: 5 });
    gss = await openDataset(paths.gss);
    const keys = new DbKeyStore(db);
    const handler = await createCrosstabHandler({ datasets: [gss], keys, usage: new DbUsageSink(db) });
    server = await listen(mountPortal(handler, createPortal({ db, keys, apiUrl: 'http://127.0.0.1/v1', exampleBody: '{}', surveys: [gss] })), { port: 0 });
    origin = server.url.replace(/\/v1$/, '');
    apiKey = (await addKey(db, { account: 'acme', name: 'production' })).apiKey;
    session = await person('acme', 'analyst@acme.example');
    tokens = hiddenTokens(gss);
  });
  afterAll(async () => {
    await server?.close();
    await db?.close();
    gss?.close();
  });

  it('has hidden names, codes, labels, values and groups to look for, and the pages show none of them', async () => {
    expect(tokens.names).toEqual(expect.arrayContaining(['polviews', 'relig', 'vpsu']));
    expect(tokens.codes).toEqual(expect.arrayContaining(['LIBERAL', 'NONES']));
    expect(tokens.labels).toEqual(expect.arrayContaining(['Extremely liberal', 'Protestant']));
    expect([...tokens.groups].sort()).toEqual(['attitudes', 'design']);
    expect(tokens.values.length).toBeGreaterThan(10);
    for (const path of ['/portal/tables', '/portal/surveys?survey=GSS']) expect(leaked((await send(origin, 'GET', path, { cookie: session.cookie })).body, '', tokens.all), path).toEqual([]);
  });

  it('no answer, hint, message or suggestion names anything of another group the request did not', async () => {
    const hidden = tokens;
    const visibleNames = ['sex', 'race', 'degree', 'age', 'year'];
    const expression = fc.oneof(
      fc.constantFrom(...hidden.names, ...hidden.codes).chain(misspelt),
      fc.constantFrom(...hidden.names, ...hidden.codes).chain(misspelt).map((name) => `${name}=1`),
      fc.tuple(fc.constantFrom(...hidden.names), fc.constantFrom('1', '2', '99', 'Liberl', 'Protestan', '1..3', 'NA')).map(([name, value]) => `${name}=${value}`),
      fc.tuple(fc.constantFrom(...visibleNames), fc.constantFrom(...hidden.values, ...hidden.labels).chain(misspelt)).map(([name, value]) => `${name}=${/^[\w.-]+$/.test(value) ? value : JSON.stringify(value)}`),
      fc.tuple(fc.constantFrom(...hidden.names), fc.constantFrom(...visibleNames)).map(([name, mine]) => `${mine}=1 AND ${name}=2`),
      fc.constantFrom(...hidden.codes, ...hidden.names),
    );
    await fc.assert(
      fc.asyncProperty(expression, async (text) => {
        for (const [where, answer] of await answersTo(text)) {
          expect(answer.status, `${where} ${text}: ${answer.body.slice(0, 300)}`).toBeLessThan(500);
          expect(leaked(answer.body, text, hidden.all), `${where} ${text}: ${answer.body.slice(0, 400)}`).toEqual([]);
        }
      }),
      { numRuns: 60, seed: 36 },
    );
  });

  it('answers a name of another group as it answers a made-up name, everywhere', async () => {
    for (const [name, madeUp] of [['polviews', 'polviewx'], ['LIBERAL', 'LIBERAX'], ['vpsu', 'vpsx'], ['relig=4', 'relix=4'], ['polviews=Liberal', 'polviewx=Liberal']] as const) {
      const real = await answersTo(name);
      const fake = await answersTo(madeUp);
      for (const [i, [where, answer]] of real.entries()) {
        const other = fake[i]![1];
        expect(answer.status, `${where} ${name}`).toBe(other.status);
        // The same answer but for the echoed name; the suggestions are near the typed name, among the caller's.
        const codeOf = (body: string) => /"code":"([a-z_]+)"/.exec(body)?.[1] ?? /"valid":(true|false)/.exec(body)?.[1];
        expect(codeOf(answer.body), `${where} ${name}`).toBe(codeOf(other.body));
      }
    }
  });

  it('counts the portal\'s expression check against the account\'s rate limit (429 with Retry-After), not billed', async () => {
    const limited = await person('limited', 'analyst@limited.example');
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await check('sex=1', 'base', limited)).status);
    expect(statuses.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
    const refused = await check('sex=1', 'base', limited);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(JSON.parse(refused.body)).toMatchObject({ valid: false, message: expect.stringMatching(/rate limit of 5 calls per minute/) });
    // The same window as the account's keys and its tables: a computed table is refused too.
    const form = new URLSearchParams({ csrf: limited.csrf, survey: 'GSS', base: '*', rows: 'sex', columns: 'race', weight: '', missing: 'hide', action: 'compute' });
    expect((await send(origin, 'POST', '/portal/tables', { cookie: limited.cookie, form })).status).toBe(429);
    expect((await db.query('SELECT 1 FROM usage u JOIN accounts a ON a.id = u.account_id WHERE a.name = $1', ['limited'])).rows).toEqual([]);
  });
});
