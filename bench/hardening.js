// Robustness figures of `crosstab serve`, run against a built CLI in child processes:
//   node bench/hardening.js [--cli dist/cli/main.js] [--dataset datasets/build/gss.arrow] [--json out.json]
// 1. SIGKILL mid-load (5 runs): 200s the client received vs records in the ledger.
// 2. Ledger faults: the ledger folder removed mid-load; a write that fails part way (a real
//    file-size limit, RLIMIT_FSIZE, lifted afterwards with prlimit).
// 3. Connection flood under `ulimit -n 256`: 1,100 connections that never read, then real requests.
// Pass --cli of an older build to get the "before" figures.
import autocannon from 'autocannon';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const { values: flags } = parseArgs({
  options: { cli: { type: 'string', default: 'dist/cli/main.js' }, dataset: { type: 'string', default: 'datasets/build/gss.arrow' }, json: { type: 'string' } },
});
const CLI = resolve(flags.cli);
const DATASET = resolve(flags.dataset);
const dir = mkdtempSync(join(tmpdir(), 'crosstab-hardening-'));
const wait = (ms) => new Promise((done) => setTimeout(done, ms));
const BODY = JSON.stringify({ SurveyCode: 'GSS', PopulationBaseCode: 'year=2024', TargetCodes: ['sex=2', 'degree=3..4'] });

const keysFile = join(dir, 'keys.json');
const added = execFileSync(process.execPath, [CLI, 'keys', 'add', '--keys', keysFile, '--surveys', '_ALL_', '--groups', '_ALL_', '--json'], { encoding: 'utf8' });
const API_KEY = JSON.parse(added).apiKey;

function lines(path) {
  if (!existsSync(path)) return { records: [], torn: 0 };
  const records = [];
  let torn = 0;
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line === '') continue;
    try {
      const record = JSON.parse(line);
      if (record.requestId) records.push(record.requestId);
    } catch {
      torn++;
    }
  }
  return { records, torn };
}

async function serve(ledger, { limits, extra = [] } = {}) {
  const args = [CLI, 'serve', '--dataset', DATASET, '--keys', keysFile, '--port', '0', '--ledger', ledger, ...extra];
  const child = limits ? spawn('bash', ['-c', `${limits}; exec "$@"`, 'bash', process.execPath, ...args], { stdio: ['ignore', 'pipe', 'pipe'] }) : spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise((done) => child.once('exit', done));
  const origin = await new Promise((done, fail) => {
    const onData = (chunk) => {
      output += chunk;
      const match = /listening on (http:\/\/[^/\s]+)/.exec(output);
      if (match) done(match[1]);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    exited.then((code) => fail(new Error(`serve exited ${code}: ${output}`)));
  });
  return { child, origin, exited, stop: async () => { child.kill('SIGKILL'); await exited; } };
}

async function post(origin) {
  try {
    const response = await fetch(`${origin}/v1/crosstab`, { method: 'POST', headers: { 'content-type': 'application/json', 'service-engine-authorizer': API_KEY }, body: BODY, signal: AbortSignal.timeout(5000) });
    await response.arrayBuffer();
    return { status: response.status, id: response.headers.get('x-request-id') };
  } catch (error) {
    return { status: 0, error: error.cause?.code ?? error.name };
  }
}

function load(origin, ok) {
  return autocannon({
    url: origin, connections: 10, duration: 3, timeout: 2,
    requests: [{ method: 'POST', path: '/v1/crosstab', headers: { 'content-type': 'application/json', 'service-engine-authorizer': API_KEY }, body: BODY, onResponse: (status, _b, _c, headers) => status === 200 && ok.push(headers['x-request-id']) }],
  });
}

const figures = { cli: CLI, date: new Date().toISOString(), sigkill: [], ledgerFaults: {}, flood: {} };

// 1. SIGKILL mid-load.
for (let run = 1; run <= 5; run++) {
  const ledger = join(dir, `kill-${run}.ndjson`);
  const server = await serve(ledger);
  const ok = [];
  const pending = load(server.origin, ok);
  setTimeout(() => server.child.kill('SIGKILL'), 1500);
  const result = await pending;
  await server.exited;
  const billed = new Set(lines(ledger).records);
  figures.sigkill.push({ run, received200: ok.length, ledgerRecords: billed.size, unbilled200: ok.filter((id) => !billed.has(id)).length, non2xx: result.non2xx });
}

// 2a. The ledger folder removed mid-load.
{
  const folder = join(dir, 'L');
  const ledger = join(folder, 'u.ndjson');
  const server = await serve(ledger);
  const before = [];
  for (let i = 0; i < 50; i++) before.push(await post(server.origin));
  rmSync(folder, { recursive: true, force: true });
  const after = [];
  for (let i = 0; i < 50; i++) after.push(await post(server.origin));
  await server.stop();
  const okAfter = after.filter((r) => r.status === 200).map((r) => r.id);
  const billed = new Set(lines(ledger).records);
  figures.ledgerFaults.removedFolder = {
    okBefore: before.filter((r) => r.status === 200).length,
    okAfterRemoval: okAfter.length,
    statusesAfterRemoval: [...new Set(after.map((r) => r.status))],
    billedAfterRemoval: okAfter.filter((id) => billed.has(id)).length,
  };
}

// 2b. A write that fails part way: 8 KiB file-size limit, ledger padded to 60 bytes below it.
{
  const ledger = join(dir, 'full.ndjson');
  writeFileSync(ledger, `{"padding":"${'x'.repeat(8192 - 75)}"}\n`);
  const server = await serve(ledger, { limits: 'ulimit -S -f 8' });
  const refused = [];
  for (let i = 0; i < 5; i++) refused.push(await post(server.origin));
  execFileSync('prlimit', ['--pid', String(server.child.pid), '--fsize=unlimited']);
  const after = [];
  for (let i = 0; i < 20; i++) after.push(await post(server.origin));
  await server.stop();
  const okAfter = after.filter((r) => r.status === 200).map((r) => r.id);
  const { records, torn } = lines(ledger);
  figures.ledgerFaults.failedWrite = {
    whileFull: refused.map((r) => r.status),
    okAfterSpaceFreed: okAfter.length,
    billedAfterSpaceFreed: okAfter.filter((id) => records.includes(id)).length,
    unparsableLedgerLines: torn,
  };
}

// 3. Connection flood under ulimit -n 256: 1,100 connections from 127.0.0.2 (half send a bad
// request, none read or close), then 20 real requests from 127.0.0.1.
for (const [name, addresses] of [['oneAddress', ['127.0.0.2']], ['twentyAddresses', Array.from({ length: 20 }, (_, i) => `127.0.1.${i + 1}`)]]) {
  const server = await serve(join(dir, `flood-${name}.ndjson`), { limits: 'ulimit -n 256' });
  const port = Number(new URL(server.origin).port);
  const sockets = [];
  // Client sockets the server has closed sit in CLOSE-WAIT (this side never closes); ss counts them.
  const closeWait = () => Number(execFileSync('bash', ['-c', `ss -Htn state close-wait dst 127.0.0.1:${port} | wc -l`], { encoding: 'utf8' }).trim());
  const established = () => Number(execFileSync('bash', ['-c', `ss -Htn state established dst 127.0.0.1:${port} | wc -l`], { encoding: 'utf8' }).trim());
  for (let i = 0; i < 1100; i++) {
    const socket = connect({ host: '127.0.0.1', port, localAddress: addresses[i % addresses.length] });
    socket.on('error', () => {});
    socket.allowHalfOpen = true;
    socket.pause();
    if (i % 2 === 0) socket.write('GARBAGE\r\n\r\n');
    sockets.push(socket);
  }
  await wait(1500);
  const heldAfter1_5s = { open: established(), closedByServer: closeWait() };
  const immediately = [];
  for (let i = 0; i < 20; i++) immediately.push((await post(server.origin)).status);
  await wait(35_000);
  const after35s = [];
  for (let i = 0; i < 20; i++) after35s.push((await post(server.origin)).status);
  figures.flood[name] = {
    floodConnections: 1100,
    after1_5s: heldAfter1_5s,
    after35s: { open: established(), closedByServer: closeWait() },
    real200Immediately: immediately.filter((s) => s === 200).length,
    real200After35s: after35s.filter((s) => s === 200).length,
    realFailures: [...new Set([...immediately, ...after35s].filter((s) => s !== 200))],
  };
  for (const socket of sockets) socket.destroy();
  await server.stop();
}

rmSync(dir, { recursive: true, force: true });
console.log(JSON.stringify(figures, null, 2));
if (flags.json) writeFileSync(flags.json, `${JSON.stringify(figures, null, 2)}\n`);
