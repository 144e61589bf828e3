// A served dataset file whose stored weights are outside the range the engine takes (written
// before weights were checked: the first read of its weights refuses them) cannot answer. The
// client did nothing wrong, so it is not a 500 (a bug) but 503 `dataset_unavailable`, naming
// the survey and none of the server's files, never billed; the operator's log says once which
// file and what is wrong, however many requests meet it. Over real HTTP with a real ledger.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileDataset } from '../../src/dataset/build/compile.js';
import { writeDataset } from '../../src/dataset/file/writer.js';
import { addApiKey, createCrosstabHandler, listen, type RunningServer } from '../../src/http/index.js';
import { openDataset, type Dataset } from '../../src/index.js';
import { rawTable } from '../support/make-dataset.js';
import { ContractJudge, readLedger, tempDir } from './support.js';

const x = ['a', 'b', 'a', 'b', 'a', 'b', 'a', 'b'];
const y = ['c', 'c', 'd', 'd', 'c', 'c', 'd', 'd'];

/** A dataset file of survey `survey` holding `weights` under the name "weight", written past the input readers' check. */
async function writeWeighted(dir: string, survey: string, weights: number[]): Promise<string> {
  const raw = rawTable({ x, y }, weights);
  // Named as the request field Weight is: a refusal naming the weight must still name no file.
  (raw.weights[0] as { name: string }).name = 'weight';
  const path = join(dir, `${survey.toLowerCase()}-served.arrow`);
  await writeDataset(compileDataset(raw, { survey }), path);
  return path;
}

let server: RunningServer;
let broken: Dataset;
let sound: Dataset;
let brokenPath = '';
let apiKey = '';
let ledger = '';
let judge: ContractJudge;
const log: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  const dir = tempDir('crosstab-weights-fault-');
  const files = mkdtempSync(join(tmpdir(), 'crosstab-weights-fault-files-'));
  brokenPath = await writeWeighted(files, 'BROKEN', [1, 2, 1e300, 1e300, 1, 2, 1, 2]);
  broken = await openDataset(brokenPath);
  sound = await openDataset(await writeWeighted(files, 'SOUND', [1, 2, 3, 1, 2, 3, 1, 2]));
  apiKey = (await addApiKey(join(dir, 'keys.json'), { surveys: ['_ALL_'], groups: ['_ALL_'], name: 'fault' })).apiKey;
  ledger = join(dir, 'usage.ndjson');
  const handler = await createCrosstabHandler({ datasets: [broken, sound], keys: join(dir, 'keys.json'), usage: ledger, log: (entry) => void log.push(entry as never) });
  server = await listen(handler, { port: 0 });
  judge = await ContractJudge.create();
});
afterAll(async () => {
  await server?.close();
  await broken?.close();
  await sound?.close();
});

async function post(path: string, body: unknown, accept = 'application/json'): Promise<{ status: number; text: string; json: any }> {
  const response = await fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'service-engine-authorizer': apiKey, accept }, body: JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, text, json: JSON.parse(text) };
}

describe('a served dataset whose stored weights are out of range', () => {
  it('answers POST /crosstab, /tables and /tabbooks with 503 dataset_unavailable naming the survey and no file, not billed, logged once', async () => {
    const requests: Array<[string, string, Record<string, unknown>, string?]> = [
      ['/crosstab', '/crosstab', { SurveyCode: 'BROKEN', PopulationBaseCode: '*', TargetCodes: ['x=a'] }],
      ['/crosstab', '/crosstab', { SurveyCode: 'BROKEN', PopulationBaseCode: 'y=c', TargetCodes: ['x=a', 'x=b'] }],
      ['/tables', '/tables', { SurveyCode: 'BROKEN', PopulationBaseCode: '*', Rows: [{ Variable: 'x' }], Columns: [{ Variable: 'y' }], Weight: 'weight', Statistics: ['vpct'] }],
      ['/tables', '/tables', { SurveyCode: 'BROKEN', PopulationBaseCode: '*', Rows: [{ Variable: 'x' }], Columns: [{ Variable: 'y' }] }, 'text/csv'],
      ['/tabbooks', '/tabbooks', { SurveyCode: 'BROKEN', Banner: ['y'], Stubs: ['x'] }, 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'],
    ];
    for (const [path, operation, body, accept] of requests) {
      const answer = await post(path, body, accept);
      expect(answer.status, `${path}: ${answer.text}`).toBe(503);
      expect(answer.json.error.code).toBe('dataset_unavailable');
      expect(answer.json.ResultCode).toBe(503);
      expect(answer.json.error.message).toContain('"BROKEN"');
      expect(answer.json.error.hint).not.toBe('');
      // Nothing of the server's files or of the fault's details reaches the client.
      expect(answer.text).not.toContain('served.arrow');
      expect(answer.text).not.toContain(tmpdir());
      expect(answer.text).not.toContain('1e+300');
      judge.check('POST', operation, 503, answer.json);
    }
    // Never billed.
    expect(readLedger(ledger)).toEqual([]);
    const answered = log.filter((entry) => entry['status'] === 503);
    expect(answered).toHaveLength(requests.length);
    for (const entry of answered) expect(entry['code']).toBe('dataset_unavailable');
    // The operator is told once, with the file and the reason.
    const events = log.filter((entry) => entry['event'] === 'dataset_unusable');
    expect(events).toHaveLength(1);
    expect(events[0]!['message']).toContain(brokenPath);
    expect(events[0]!['message']).toContain('BROKEN');
    expect(events[0]!['message']).toContain('above 1e+50');
  });

  it('other surveys of the same server answer', async () => {
    const answer = await post('/crosstab', { SurveyCode: 'SOUND', PopulationBaseCode: '*', TargetCodes: ['x=a'] });
    expect(answer.status, answer.text).toBe(200);
    // x=a: respondents 1, 3, 5, 7 with weights 1, 3, 2, 1.
    expect(answer.json.Results).toEqual([{ WgtAud: 7, Resps: 4, Stbl: 1 }]);
  });
});
