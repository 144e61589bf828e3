// The portal's Tables page hands the user a table the API billed (a page, a CSV download, a
// tab book): when that page or file is not delivered, the usage row is voided, as an API
// answer's is. Real HTTP (listen()), real sockets, the embedded database, the real GSS
// dataset; the usage row's commit is held by the test so that the client leaves while it is
// being written, and the order is fixed.
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Database } from '../../src/access/index.js';
import type { RunningServer } from '../../src/http/index.js';
import { openRaw } from '../http/raw-http.js';
import { held, until, type HeldSink } from '../support/held-usage.js';
import { csrfOf, send } from './portal-client.js';
import { startPortalServer, type PortalServer } from './portal-server.js';

const paths = inject('testDatasets');

describe('portal tables not delivered are voided (embedded database)', () => {
  let served: PortalServer;
  let db: Database;
  let server: RunningServer;
  let origin: string;
  let sink: HeldSink;
  let cookie: string;
  let csrf: string;
  const sockets = new Set<Socket>();

  beforeAll(async () => {
    served = await startPortalServer({
      datasets: [paths.gss],
      prefix: 'crosstab-portal-void-',
      licences: [['GSS'], ['GSS:demographics']],
      mustChangePassword: false,
      usage: (own) => (sink = held(own)),
    });
    ({ db, server, origin } = served);
    server.server.on('connection', (socket: Socket) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
    });
    cookie = await served.signInCookie('analyst@acme.example');
    csrf = csrfOf(await send(origin, 'GET', '/portal/tables', { cookie }));
  });
  afterAll(() => served?.close());

  const usage = async () => (await db.query<{ request_id: string; operation: string; void_reason: string | null }>('SELECT request_id, operation, void_reason FROM usage ORDER BY time')).rows;
  const tableFields = (fields: Record<string, string>) => new URLSearchParams({ csrf, survey: 'GSS', base: 'year=2024', rows: 'race', columns: 'sex', weight: '', missing: 'hide', action: 'compute', ...fields }).toString();
  const tabbookFields = () => new URLSearchParams({ csrf, survey: 'GSS', base: 'year=2024', banner: 'sex', stubs: 'race', weight: '', missing: 'hide' }).toString();
  const post = (path: string, body: string) =>
    `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncookie: ${cookie}\r\ncontent-type: application/x-www-form-urlencoded\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

  /** Posts `request` on a raw connection and closes it while the call's usage row is being written; the rows added. */
  async function leaveDuringRecord(request: string): Promise<Array<{ request_id: string; operation: string; void_reason: string | null }>> {
    const before = (await usage()).length;
    let release!: () => void;
    const holding = new Promise<void>((resolve) => {
      sink.hold = { recorded: resolve, release: new Promise<void>((done) => (release = done)) };
    });
    const client = await openRaw(server.port);
    client.write(request);
    await holding;
    client.destroy();
    await until(() => sockets.size === 0, 'the server to see the close');
    release();
    await until(async () => (await usage()).length >= before + 2, 'the usage row and its void');
    return (await usage()).slice(before);
  }

  it.each([
    ['the Tables page (the table shown in HTML)', '/portal/tables', () => tableFields({}), 'table'],
    ['a CSV download of the Tables page', '/portal/tables', () => tableFields({ action: 'csv' }), 'table'],
    ['a tab book download', '/portal/tables/tabbook', () => tabbookFields(), 'tabbook'],
  ])('%s whose client leaves while its row is written: the row and its void', async (_what, path, fields, operation) => {
    const rows = await leaveDuringRecord(post(path, fields()));
    expect(rows.map((row) => [row.operation, row.void_reason])).toEqual([
      [operation, null],
      [operation, 'client_closed'],
    ]);
    expect(rows[1]!.request_id).toBe(rows[0]!.request_id);
  });

  it('a page delivered whole is not voided', async () => {
    const before = (await usage()).length;
    const reply = await send(origin, 'POST', '/portal/tables', { cookie, form: new URLSearchParams(tableFields({})) });
    expect(reply.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await usage()).slice(before).map((row) => row.void_reason)).toEqual([null]);
  });
});
