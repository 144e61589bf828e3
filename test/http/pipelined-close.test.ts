// Requests pipelined on one connection behind an answer that closes it (a refusal answered
// from the headers, its body left unread: Connection: close): the requests after it are never
// answered, so they must not be billed. Each answer sent is billed exactly once, in order.
// Real sockets against listen(), the real GSS dataset, key file and fsync'd ledger.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCrosstabHandler, listen, type AccessLogEntry, type RunningServer } from '../../src/http/index.js';
import { openRaw } from './raw-http.js';
import { readLedger, servedFixture } from './support.js';

const { gss, dir, keys } = await servedFixture();
const ledger = join(dir, 'usage.ndjson');
const log: AccessLogEntry[] = [];
let server: RunningServer;

beforeAll(async () => {
  const handler = await createCrosstabHandler({ datasets: [gss], keys: keys.path, usage: ledger, log: (entry) => 'status' in entry && log.push(entry) });
  server = await listen(handler, { port: 0 });
});
afterAll(() => server?.close(0));

const body = (target: string) => JSON.stringify({ SurveyCode: 'GSS', PopulationBaseCode: '*', TargetCodes: [target] });
const post = (text: string, headers: Record<string, string> = {}, path = '/v1/crosstab') => {
  const all = { 'content-type': 'application/json', 'service-engine-authorizer': keys.all, 'content-length': String(Buffer.byteLength(text)), ...headers };
  return `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\n${Object.entries(all).map(([name, value]) => `${name}: ${value}`).join('\r\n')}\r\n\r\n${text}`;
};

/** Sends `requests` in one write; the statuses received before the server closed, and the ledger records and log lines they made. */
async function pipelined(requests: string[]): Promise<{ received: number[]; bodies: string[]; billed: number; logged: number[] }> {
  const records = readLedger(ledger).length;
  const lines = log.length;
  const client = await openRaw(server.port);
  let text = '';
  client.socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
  client.write(requests.join(''));
  await client.closed();
  for (let waited = 0; log.length - lines < requests.length && waited < 10_000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
  const answers = text.split(/(?=HTTP\/1\.1 \d{3} )/).filter((answer) => answer !== '');
  return { received: [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1])), bodies: answers.map((answer) => answer.slice(answer.indexOf('\r\n\r\n') + 4)), billed: readLedger(ledger).length - records, logged: log.slice(lines).map((entry) => entry.status) };
}

describe('requests pipelined behind an answer that closes the connection', () => {
  it.each([
    ['an unknown key', post(body('sex=1'), { 'service-engine-authorizer': 'sek_unknown' }), 401],
    ['a wrong Content-Type', post(body('sex=1'), { 'content-type': 'text/plain' }), 415],
    ['an unknown path with a body', post(body('sex=1'), {}, '/v1/nope'), 404],
  ])('behind %s: not billed (499), only the refusal is received', async (_name, first, status) => {
    const result = await pipelined([first, post(body('sex=2')), post(body('age=18..30'))]);
    expect(result.received).toEqual([status]);
    expect(result.billed).toBe(0);
    expect(result.logged).toEqual([status, 499, 499]);
  });

  it('answers on a connection kept open are each received in order and billed once', async () => {
    const targets = ['sex=1', 'sex=2', 'age=18..30', 'age=31..50', 'race=1'];
    const requests = targets.map((target, i) => post(body(target), i === targets.length - 1 ? { connection: 'close' } : {}));
    const result = await pipelined(requests);
    expect(result.received).toEqual([200, 200, 200, 200, 200]);
    expect(result.billed).toBe(5);
    // In the order sent: each answer is its own request's figure.
    const expected = await Promise.all(targets.map(async (target) => (await gss.crosstab({ base: '*', targets: [target] })).targets[0]!.respondents));
    expect(result.bodies.map((text) => (JSON.parse(text) as { Results: Array<{ Resps: number }> }).Results[0]!.Resps)).toEqual(expected);
    expect(new Set(expected).size).toBe(targets.length);
  });
});
