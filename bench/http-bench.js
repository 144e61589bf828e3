#!/usr/bin/env node
// POST /crosstab of `crosstab serve` on the bundled GSS survey, beside a bare node:http
// server answering the same JSON body, in the same run, with autocannon on loopback, and a
// bare node:http server that makes one fsync'd ledger line per request before it answers (the
// floor of any durably billed answer on this machine).
//
//   node bench/http-bench.js [--duration 5] [--rounds 3] [--connections 10] [--dataset datasets/build/gss.arrow]
//                            [--cli dist/cli/main.js] [--postgres postgres://...] [--before-cli PATH]
//                            [--flood 32] [--pin SERVER_CPU,CLIENT_CPU] [--json] [--out bench/results/DATE-http]
//                            [--only TEXT]
//
// --only TEXT: bare node:http and the servers whose name holds TEXT, nothing else (e.g.
// --only docs: the GET /v1/docs rows, plain, compressed and conditional, and with
// --before-cli the same of the build before).
//
// Key stores compared: the key file + NDJSON ledger, the access database embedded (PGlite)
// and, with --postgres, a PostgreSQL server (the database's tables are created on start;
// `--postgres auto` starts a throwaway one with bench/lib/postgres.js and stops it after).
//
// --pin SERVER_CPU,CLIENT_CPU (e.g. --pin 0,1; needs util-linux's taskset): every server child
// (and the PostgreSQL server of `--postgres auto`) runs under `taskset -c SERVER_CPU`, and this
// process, the autocannon load generator, on CLIENT_CPU (all its threads), so the client does
// not take the server's core. The pinning is printed and recorded in --json.
//
// --before-cli adds the same POST servers of another build (e.g. main's dist/ copied aside
// inside this checkout, so it finds node_modules), labelled "(before)": a change measured
// against what it changes in one run, under the same load.
//
// --flood N (default 32; 0 = off): each database-store server is also measured with N more
// connections sending made-up, well-formed API keys at the same time (every one a different
// key, so no cache can answer it): the row "... under an unknown-key flood" gives the
// legitimate clients' req/s, and the flood's answers (401 until the per-address limit, then
// 429) are counted beside it.
//
// Each server runs in its own child process; the client runs here. Runs alternate between
// the servers for --rounds rounds and the medians are reported.
// Answers are checked against `crosstab query --json` before timing, and the usage ledger
// against the number of 200s afterwards.
import autocannon from 'autocannon';
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { affinityOf, onServerCpu, parsePin, pinSelf } from './lib/pin.js';
import { startPostgres } from './lib/postgres.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const QUERY = { base: 'year=2024', targets: ['sex=2', 'degree=3..4'] };

if (process.argv[2] === '--bare-server') {
  // The baseline: node:http answering a fixed JSON body (the same bytes the service returns).
  const body = process.argv[3];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) }).end(body));
  });
  server.listen(0, '127.0.0.1', () => process.stdout.write(`listening on http://127.0.0.1:${server.address().port}/v1\n`));
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
} else if (process.argv[2] === '--durable-bare-server') {
  await durableBareServer(process.argv[3], process.argv[4]);
} else {
  await main();
}

/**
 * The floor of a billed answer: node:http, the JSON body parsed, one NDJSON line per request
 * appended and made durable before the fixed answer is sent, with the service ledger's group
 * commit (records arriving during a flush form the next batch; up to 3 fdatasyncs in flight,
 * each on its own file description). No auth, validation, engine or usage record fields.
 */
async function durableBareServer(ledgerPath, body) {
  const { open } = await import('node:fs/promises');
  const file = await open(ledgerPath, 'a');
  const idle = [];
  for (let i = 0; i < 3; i++) idle.push(await open(ledgerPath, 'r'));
  let pending = [];
  let appending = false;
  // Told on SIGTERM in the form of the service ledger's closing event, so that the bench prints
  // the floor's billed calls per durable write beside the service's.
  const stats = { records: 0, durableWrites: 0, writeMs: 0 };
  let wake = [];
  const appendLoop = async () => {
    appending = true;
    while (pending.length > 0) {
      if (idle.length === 0) {
        await new Promise((resolve) => wake.push(resolve));
        continue;
      }
      const batch = pending;
      pending = [];
      const began = performance.now();
      await file.write(batch.map((entry) => entry.line).join(''));
      const sync = idle.pop();
      void sync.datasync().then(() => {
        idle.push(sync);
        stats.records += batch.length;
        stats.durableWrites++;
        stats.writeMs += performance.now() - began;
        for (const entry of batch) entry.answer();
        const waiting = wake;
        wake = [];
        for (const resolve of waiting) resolve();
      });
    }
    appending = false;
  };
  const length = Buffer.byteLength(body);
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const query = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const line = `${JSON.stringify({ time: new Date().toISOString(), survey: query.SurveyCode, targets: query.TargetCodes.length })}\n`;
      pending.push({ line, answer: () => res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': length }).end(body) });
      if (!appending) void appendLoop();
    });
  });
  server.listen(0, '127.0.0.1', () => process.stdout.write(`listening on http://127.0.0.1:${server.address().port}/v1\n`));
  process.on('SIGTERM', () => {
    process.stderr.write(`${JSON.stringify({ event: 'ledger_closed', stats })}\n`);
    server.close(() => process.exit(0));
  });
}

async function main() {
  const { values: options } = parseArgs({
    options: {
      duration: { type: 'string', default: '5' },
      rounds: { type: 'string', default: '3' },
      connections: { type: 'string', default: '10' },
      dataset: { type: 'string', default: join(root, 'datasets', 'build', 'gss.arrow') },
      cli: { type: 'string', default: join(root, 'dist', 'cli', 'main.js') },
      json: { type: 'boolean', default: false },
      out: { type: 'string' },
      postgres: { type: 'string' },
      'before-cli': { type: 'string' },
      flood: { type: 'string', default: '32' },
      pin: { type: 'string' },
      only: { type: 'string' },
    },
  });
  let pin;
  try {
    pin = parsePin(options.pin);
  } catch (error) {
    process.stderr.write(`http-bench: ${error.message}\n`);
    process.exit(2);
  }
  if (pin !== undefined) pin.client = pinSelf(pin);
  const uptime = () => execFileSync('uptime', { encoding: 'utf8' }).trim();
  const uptimeBefore = uptime();
  const ownedPostgres = options.postgres === 'auto' ? await startPostgres({ cpu: pin?.serverCpu }) : undefined;
  try {
    const postgresAffinity = pin && ownedPostgres && affinityOf(ownedPostgres.pid);
    await run(options, pin, ownedPostgres?.url ?? options.postgres, { uptimeBefore, uptime, postgresVersion: ownedPostgres?.version, postgresAffinity });
  } finally {
    ownedPostgres?.stop();
  }
}

async function run(options, pin, postgres, machine) {
  const duration = Number(options.duration);
  const connections = Number(options.connections);
  const rounds = Number(options.rounds);
  const flood = Number(options.flood);
  const crosstab = (...args) => execFileSync(process.execPath, [options.cli, ...args], { encoding: 'utf8' });
  const work = mkdtempSync(join(tmpdir(), 'crosstab-http-bench-'));
  try {
    const keys = join(work, 'keys.json');
    const ledger = join(work, 'usage.ndjson');
    /** Every fsync'd ledger of the run, with the 200s billed to it. */
    const ledgers = [{ path: ledger, billed: 0 }];
    const uncachedLedger = { path: join(work, 'usage-uncached.ndjson'), billed: 0 };
    ledgers.push(uncachedLedger);
    const bareLedger = { path: join(work, 'usage-bare.ndjson'), billed: 0 };
    ledgers.push(bareLedger);
    const shmLedger = join('/dev/shm', `${basename(work)}.ndjson`);
    const { apiKey } = JSON.parse(crosstab('keys', 'add', '--keys', keys, '--surveys', '_ALL_', '--groups', '_ALL_', '--name', 'bench', '--json'));
    const expected = crosstab('query', options.dataset, '--base', QUERY.base, ...QUERY.targets.flatMap((t) => ['--target', t]), '--json').trim();
    const request = {
      method: 'POST',
      path: '/v1/crosstab',
      headers: { 'content-type': 'application/json', 'service-engine-authorizer': apiKey },
      body: JSON.stringify({ SurveyCode: 'GSS', PopulationBaseCode: QUERY.base, TargetCodes: QUERY.targets }),
    };
    // The access database: an account licensing GSS and a key of it, in each database.
    const databases = [{ label: 'embedded PGlite', location: join(work, 'db') }, ...(postgres ? [{ label: 'PostgreSQL server', location: postgres }] : [])];
    // The build before: its own PGlite folder (one process per folder); the PostgreSQL server is shared.
    if (options['before-cli']) databases.push({ label: 'embedded PGlite (before)', location: join(work, 'db-before') });
    for (const database of databases) {
      const account = `bench-${basename(work).slice(-6).toLowerCase()}`;
      crosstab('accounts', 'add', '--name', account, '--surveys', 'GSS', '--groups', 'GSS:_ALL_', '--database', database.location);
      database.account = account;
      database.apiKey = JSON.parse(crosstab('keys', 'add', '--account', account, '--name', 'bench', '--json', '--database', database.location)).apiKey;
      database.billed = 0;
    }
    const log = (line) => !options.json && process.stderr.write(`${line}\n`);
    const rows = [];

    // Every autocannon connection comes from 127.0.0.1: lift serve's per-address limit (64
    // by default) above the connections of the run, or the rest are refused with 503.
    const perAddress = ['--max-connections-per-address', String(Math.max(64, connections + flood + 16))];
    /** The key-file servers of the build before (its own ledgers; the same key file). */
    const beforeTargets = (cli) => {
      const before = { path: join(work, 'usage-before.ndjson'), billed: 0 };
      ledgers.push(before);
      return [
        { name: 'crosstab serve (before), fsync\'d ledger', args: [cli, 'serve', '--dataset', options.dataset, '--keys', keys, '--ledger', before.path, '--port', '0', ...perAddress], requests: [request], ledger: before },
        ...(existsSync('/dev/shm')
          ? [{ name: 'crosstab serve (before), ledger on tmpfs', args: [cli, 'serve', '--dataset', options.dataset, '--keys', keys, '--ledger', `${shmLedger}.before`, '--port', '0', ...perAddress], requests: [request] }]
          : []),
      ];
    };
    const targets = [
      { name: 'bare node:http, fixed JSON', args: [fileURLToPath(import.meta.url), '--bare-server', expected], requests: [request] },
      // What durable billing alone costs: bare node:http plus the ledger's append and fdatasync.
      { name: 'bare node:http + fsync\'d ledger (JSON parsed, one line per request, group commit)', args: [fileURLToPath(import.meta.url), '--durable-bare-server', bareLedger.path, expected], requests: [request], ledger: bareLedger },
      {
        name: 'crosstab serve, POST /v1/crosstab (GSS, 2 targets, fsync\'d ledger)',
        args: [options.cli, 'serve', '--dataset', options.dataset, '--keys', keys, '--ledger', ledger, '--port', '0', ...perAddress],
        requests: [request],
        ledger: ledgers[0],
      },
      // Every request computed by the kernel: the cell cache off (it answers the repeated query above from memory).
      {
        name: 'crosstab serve, POST /v1/crosstab, cell cache off (--cell-cache 0), fsync\'d ledger',
        args: [options.cli, 'serve', '--dataset', options.dataset, '--keys', keys, '--ledger', uncachedLedger.path, '--cell-cache', '0', '--port', '0', ...perAddress],
        requests: [request],
        ledger: uncachedLedger,
      },
      // The same with the ledger in memory (tmpfs: fdatasync costs nothing), to show what durability costs.
      ...(existsSync('/dev/shm')
        ? [
            {
              name: 'crosstab serve, POST /v1/crosstab, ledger on tmpfs (no disk flush)',
              args: [options.cli, 'serve', '--dataset', options.dataset, '--keys', keys, '--ledger', shmLedger, '--port', '0', ...perAddress],
              requests: [request],
            },
            // What the Prometheus metrics cost on the request path, where nothing else hides it.
            {
              name: 'crosstab serve, POST /v1/crosstab, ledger on tmpfs, --metrics-port (metrics on)',
              args: [options.cli, 'serve', '--dataset', options.dataset, '--keys', keys, '--ledger', `${shmLedger}.metrics`, '--metrics-port', '0', '--port', '0', ...perAddress],
              requests: [request],
            },
          ]
        : []),
      ...databases.map((database) => ({
        name: `crosstab serve, POST /v1/crosstab, database store (${database.label})`,
        args: [database.label.endsWith('(before)') ? options['before-cli'] : options.cli, 'serve', '--dataset', options.dataset, '--database', database.location, '--port', '0', ...perAddress],
        requests: [{ ...request, headers: { ...request.headers, 'service-engine-authorizer': database.apiKey } }],
        database,
      })),
      // The PostgreSQL sink with three statements in flight (its flushes overlapping, as the ledger's do).
      ...(postgres
        ? [{ name: 'crosstab serve, POST /v1/crosstab, database store (PostgreSQL server, --usage-statements 3)', args: [options.cli, 'serve', '--dataset', options.dataset, '--database', postgres, '--usage-statements', '3', '--port', '0', ...perAddress], requests: [{ ...request, headers: { ...request.headers, 'service-engine-authorizer': databases[1].apiKey } }], database: databases[1] }]
        : []),
      ...(options['before-cli'] ? beforeTargets(options['before-cli']) : []),
      ...(options['before-cli'] && postgres
        ? [{ name: 'crosstab serve (before), database store (PostgreSQL server)', args: [options['before-cli'], 'serve', '--dataset', options.dataset, '--database', postgres, '--port', '0', ...perAddress], requests: [{ ...request, headers: { ...request.headers, 'service-engine-authorizer': databases[1].apiKey } }], database: databases[1] }]
        : []),
      ...docsTargets('', options.cli),
      ...(options['before-cli'] ? docsTargets(' (before)', options['before-cli']) : []),
    ].filter((target, index) => options.only === undefined || index === 0 || target.name.includes(options.only));
    /** GET /v1/docs of a build: as fetched without Accept-Encoding, as browsers ask for it, and asked again with its ETag. */
    function docsTargets(label, cli) {
      const args = [cli, 'serve', '--dataset', options.dataset, '--keys', keys, '--ledger', join(work, `docs${label === '' ? '' : '-before'}.ndjson`), '--port', '0', ...perAddress];
      return [
        { name: `crosstab serve${label}, GET /v1/docs (no auth, engine or ledger)`, args, requests: [{ method: 'GET', path: '/v1/docs' }] },
        { name: `crosstab serve${label}, GET /v1/docs, Accept-Encoding: gzip, deflate, br`, args, requests: [{ method: 'GET', path: '/v1/docs', headers: { 'accept-encoding': 'gzip, deflate, br' } }] },
        // If-None-Match of the ETag the server sends (found once it runs); a build without ETags answers 200.
        { name: `crosstab serve${label}, GET /v1/docs, If-None-Match: its ETag (gzip)`, args, requests: [{ method: 'GET', path: '/v1/docs', headers: { 'accept-encoding': 'gzip, deflate, br' } }], conditional: true },
      ];
    }
    // All servers start first and are checked; then the runs alternate between them, round
    // after round, so that a noisy neighbour slows every server alike. Medians are reported.
    const running = [];
    /** The document each build sends, by its CLI. */
    const docsTexts = {};
    try {
      for (const target of targets) {
        const { child, origin, stderr } = await start(target.args, pin);
        running.push({ ...target, child, origin, stderr, runs: [], affinity: pin && affinityOf(child.pid) });
        if (target.requests[0].path === '/v1/docs') {
          // Every coding decodes to the same document (fetch decodes gzip and br).
          const text = await (await fetch(`${origin}/v1/docs`, { headers: { ...target.requests[0].headers } })).text();
          const plain = (docsTexts[target.args[0]] ??= text);
          if (text !== plain || JSON.parse(text).openapi !== '3.0.1') throw new Error(`something is off: ${target.name} sent another document than the same build without Accept-Encoding`);
        }
        if (target.conditional) {
          const etag = (await fetch(`${origin}${target.requests[0].path}`, { headers: target.requests[0].headers })).headers.get('etag');
          if (etag !== null) target.requests[0].headers['if-none-match'] = etag;
        }
        if (target.requests[0].method === 'POST') {
          const reply = await fetch(`${origin}${request.path}`, { method: 'POST', headers: target.requests[0].headers, body: request.body });
          const text = await reply.text();
          if (reply.status !== 200 || JSON.stringify(JSON.parse(text)) !== JSON.stringify(JSON.parse(expected))) {
            throw new Error(`something is off: ${target.name} answered ${reply.status} ${text}, \`crosstab query\` says ${expected}`);
          }
          if (target.ledger) target.ledger.billed++;
          if (target.database) target.database.billed++;
        }
        const warm = await autocannon({ url: origin, connections, duration: 1, requests: target.requests });
        if (target.ledger) target.ledger.billed += warm['2xx'];
        if (target.database) target.database.billed += warm['2xx'];
      }
      for (let round = 1; round <= rounds; round++) {
        for (const target of running) {
          log(`round ${round}/${rounds}: ${target.name}, ${duration} s with ${connections} connections`);
          const cpuBefore = processCpuMicros(target.child.pid);
          const loopBefore = eventLoopThread(target.child.pid);
          const wallBefore = process.hrtime.bigint();
          const clientBefore = process.cpuUsage();
          const result = await autocannon({ url: target.origin, connections, duration, requests: target.requests });
          result.serverCpuMicros = processCpuMicros(target.child.pid) - cpuBefore;
          result.loop = eventLoopShares(loopBefore, eventLoopThread(target.child.pid), Number(process.hrtime.bigint() - wallBefore));
          const client = process.cpuUsage(clientBefore);
          result.clientCpuMicros = client.user + client.system;
          if (target.ledger) target.ledger.billed += result['2xx'];
          if (target.database) target.database.billed += result['2xx'];
          target.runs.push(result);
          if (target.database && flood > 0) {
            log(`round ${round}/${rounds}: ${target.name}, ${duration} s with ${connections} connections and ${flood} flooding with unknown keys`);
            const [legitimate, attack] = await Promise.all([
              autocannon({ url: target.origin, connections, duration, requests: target.requests }),
              autocannon({ url: target.origin, connections: flood, duration, requests: [unknownKeyRequest(request)] }),
            ]);
            target.database.billed += legitimate['2xx'];
            (target.floodRuns ??= []).push({ legitimate, attack });
          }
        }
      }
    } finally {
      for (const { child } of running) {
        child.kill('SIGTERM');
        await new Promise((done) => child.once('close', done));
      }
    }
    const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
    for (const target of running) {
      rows.push({
        server: target.name,
        requestsPerSecond: Math.round(median(target.runs.map((run) => run.requests.average))),
        meanMs: Math.round(median(target.runs.map((run) => run.latency.mean)) * 100) / 100,
        p50Ms: median(target.runs.map((run) => run.latency.p50)),
        p99Ms: median(target.runs.map((run) => run.latency.p99)),
        // CPU time of the server process (every thread: event loop, thread pool, database) per
        // answered request: steadier than req/s on a shared machine.
        serverCpuMicrosPerRequest: Math.round(median(target.runs.map((run) => run.serverCpuMicros / Math.max(1, run['2xx'] + run.non2xx)))),
        // The same for this process, the load generator: when it nears a whole core (its share of
        // the run's seconds), the client, not the server, bounds req/s.
        clientCpuMicrosPerRequest: Math.round(median(target.runs.map((run) => run.clientCpuMicros / Math.max(1, run['2xx'] + run.non2xx)))),
        clientCpuShare: Number(median(target.runs.map((run) => run.clientCpuMicros / (duration * 1e6))).toFixed(2)),
        // The server's event-loop thread: the share of the run it was idle (neither running nor
        // waiting for a CPU: waiting for I/O such as the ledger's flush) and waiting for a CPU.
        ...(target.runs[0].loop && {
          loopIdleShare: Number(median(target.runs.map((run) => run.loop.idle)).toFixed(2)),
          loopWaitingShare: Number(median(target.runs.map((run) => run.loop.waiting)).toFixed(2)),
        }),
        // A conditional request's answer is a 304.
        ok: target.runs.reduce((sum, run) => sum + run['2xx'] + (target.conditional ? notModified(run) : 0), 0),
        failed: target.runs.reduce((sum, run) => sum + run.non2xx - (target.conditional ? notModified(run) : 0) + run.errors + run.timeouts, 0),
        ...durableWrites(target.stderr()),
      });
      if (target.floodRuns) {
        const runs = target.floodRuns.map((run) => run.legitimate);
        const answers = (status) => target.floodRuns.reduce((sum, run) => sum + (run.attack.statusCodeStats?.[status]?.count ?? 0), 0);
        rows.push({
          server: `${target.name}, under an unknown-key flood (${flood} connections)`,
          requestsPerSecond: Math.round(median(runs.map((run) => run.requests.average))),
          meanMs: Math.round(median(runs.map((run) => run.latency.mean)) * 100) / 100,
          p50Ms: median(runs.map((run) => run.latency.p50)),
          p99Ms: median(runs.map((run) => run.latency.p99)),
          // Shared with the flood: not comparable per request.
          serverCpuMicrosPerRequest: undefined,
          ok: runs.reduce((sum, run) => sum + run['2xx'], 0),
          failed: runs.reduce((sum, run) => sum + run.non2xx + run.errors + run.timeouts, 0),
          flood: { requestsPerSecond: Math.round(median(target.floodRuns.map((run) => run.attack.requests.average))), unauthorized: answers('401'), throttled: answers('429'), other: target.floodRuns.reduce((sum, run) => sum + run.attack['2xx'], 0) },
        });
      }
    }
    // Autocannon abandons the requests in flight when its time is up; the server still
    // answers and bills them, so a ledger may exceed the 200s received by up to that many.
    // Only the ledgers of servers that ran (--only).
    const ranLedgers = new Set(running.map((target) => target.ledger));
    ledgers.splice(0, ledgers.length, ...ledgers.filter((entry) => ranLedgers.has(entry)));
    for (const entry of ledgers) {
      // Billing records and void records (an answer billed, then not delivered: a request in
      // flight when a run ended); a 200 received is never voided, so the records without a
      // void are at least the 200s.
      const lines = readFileSync(entry.path, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));
      const voided = new Set(lines.filter((line) => line.void === true).map((line) => line.requestId));
      entry.records = lines.length - voided.size;
      entry.voids = voided.size;
      const net = entry.records - lines.filter((line) => line.void !== true && voided.has(line.requestId)).length;
      if (net < entry.billed || entry.records > entry.billed + (rounds + 1) * connections) {
        throw new Error(`something is off: the ledger ${entry.path} holds ${entry.records} records (${entry.voids} voided) for ${entry.billed} 200s`);
      }
    }
    const records = ledgers[0]?.records ?? 0;
    const billedResponses = ledgers[0]?.billed ?? 0;
    for (const database of databases) {
      if (!running.some((target) => target.database === database)) continue;
      database.rows = JSON.parse(crosstab('usage', '--account', database.account, '--json', '--database', database.location)).calls;
      const servers = running.filter((target) => target.database === database).length;
      // Runs per server: the warm-up, each round, and each round's flood run.
      const runs = 1 + rounds * (flood > 0 ? 2 : 1);
      if (database.rows < database.billed || database.rows > database.billed + runs * connections * servers) {
        throw new Error(`something is off: the ${database.label} database holds ${database.rows} usage rows for ${database.billed} 200s`);
      }
    }

    // Each server's share of bare node:http's req/s and of the durable floor's, in this run.
    const bareRate = rows[0].requestsPerSecond;
    const floorRate = rows.find((row) => row.server.startsWith('bare node:http + fsync'))?.requestsPerSecond;
    for (const row of rows) {
      row.ofBare = Number((row.requestsPerSecond / bareRate).toFixed(3));
      if (floorRate !== undefined) row.ofFloor = Number((row.requestsPerSecond / floorRate).toFixed(3));
    }
    const report = {
      date: new Date().toISOString(),
      command: `node ${process.argv.slice(1).map((arg) => (/^[\w./:,=-]+$/.test(arg) ? arg : `'${arg}'`)).join(' ')}`,
      node: process.version,
      cpu: `${cpus().length} x ${cpus()[0]?.model ?? 'unknown'}`,
      loadAverage: loadavg()[0],
      uptimeBefore: machine.uptimeBefore,
      uptimeAfter: machine.uptime(),
      ...(machine.postgresVersion ? { postgres: `${machine.postgresVersion}, started for the run (bench/lib/postgres.js)` } : {}),
      pin: pin && {
        serverCpu: pin.serverCpu,
        clientCpu: pin.clientCpu,
        taskset: pin.taskset,
        client: pin.client,
        servers: running.map((target) => ({ server: target.name, affinity: target.affinity })),
        ...(machine.postgresAffinity ? { postgres: machine.postgresAffinity } : {}),
      },
      durationSeconds: duration,
      rounds,
      connections,
      ledger: { records, okResponses: billedResponses },
      ledgers: ledgers.map(({ path, records: lines, voids, billed }) => ({ file: basename(path), records: lines, voids, okResponses: billed })),
      databases: databases.filter((database) => database.rows !== undefined).map(({ label, rows: usageRows, billed }) => ({ label, usageRows, okResponses: billed })),
      rows,
    };
    if (options.json) {
      process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
      if (options.out === undefined) return;
    }
    let text = '';
    const say = (part) => {
      text += part;
      if (!options.json) process.stdout.write(part);
    };
    // autocannon records latency in whole milliseconds; the mean keeps the fraction.
    const header = ['server', 'req/s', 'of bare', 'of floor', 'server CPU µs/req', 'client CPU µs/req', 'client CPU share', 'loop idle', 'mean ms', 'p50 ms', 'p99 ms', '2xx', 'failed'];
    const bare = rows[0].requestsPerSecond;
    const floor = rows.find((row) => row.server.startsWith('bare node:http + fsync'))?.requestsPerSecond;
    const table = rows.map((row) => [row.server, String(row.requestsPerSecond), (row.requestsPerSecond / bare).toFixed(2), floor === undefined ? '-' : (row.requestsPerSecond / floor).toFixed(2), String(row.serverCpuMicrosPerRequest ?? '-'), String(row.clientCpuMicrosPerRequest ?? '-'), row.clientCpuShare?.toFixed(2) ?? '-', row.loopIdleShare?.toFixed(2) ?? '-', row.meanMs.toFixed(2), String(row.p50Ms), String(row.p99Ms), String(row.ok), String(row.failed)]);
    const widths = header.map((cell, i) => Math.max(cell.length, ...table.map((row) => row[i].length)));
    const line = (cells) => cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ');
    say(`${report.date}  node ${report.node}  ${report.cpu}  load ${loadavg()[0].toFixed(1)}  ${rounds} rounds of ${duration} s x ${connections} connections (medians)\n`);
    if (pin) {
      const postgresLine = machine.postgresAffinity ? `; PostgreSQL server: ${machine.postgresAffinity}` : '';
      say(`pinned: servers on CPU ${pin.serverCpu} (taskset -c ${pin.serverCpu}${postgresLine}), load generator on CPU ${pin.clientCpu} (${pin.client})\n`);
    }
    say(`uptime before: ${report.uptimeBefore}\nuptime after:  ${report.uptimeAfter}\n`);
    say(`${[line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...table.map(line)].join('\n')}\n`);
    for (const entry of ledgers) say(`ledger ${basename(entry.path)}: ${entry.records} records for ${entry.billed} 200s received, ${entry.voids} voided (requests in flight when a run ended: billed, then not delivered)\n`);
    for (const database of databases.filter((entry) => entry.rows !== undefined)) say(`${database.label}: ${database.rows} usage rows for ${database.billed} 200s received\n`);
    for (const row of rows.filter((entry) => entry.flood !== undefined)) {
      say(`${row.server}: the flood sent ${row.flood.requestsPerSecond} req/s, answered ${row.flood.unauthorized} x 401 and ${row.flood.throttled} x 429 (${row.flood.other} x 200)\n`);
    }
    for (const row of rows.filter((entry) => entry.recordsPerDurableWrite !== undefined)) {
      say(`${row.server}: ${row.recordsPerDurableWrite} billed calls per durable write or commit, ${row.microsPerDurableWrite} µs per write (mean wall time in flight, the whole run)\n`);
    }
    if (options.out !== undefined) writeResults(options.out, report, text);
  } finally {
    rmSync(work, { recursive: true, force: true });
    rmSync(join('/dev/shm', `${basename(work)}.ndjson`), { force: true });
    rmSync(join('/dev/shm', `${basename(work)}.ndjson.before`), { force: true });
    rmSync(join('/dev/shm', `${basename(work)}.ndjson.metrics`), { force: true });
  }
}

/**
 * --out PREFIX: PREFIX.json (the report) and PREFIX.md (what the run printed: date, machine,
 * load before and after, pinning, the table with each server's share of bare node:http and of
 * the durable floor, and the billing check), e.g. --out bench/results/2026-11-29-http.
 */
function writeResults(prefix, report, text) {
  writeFileSync(`${prefix}.json`, `${JSON.stringify(report, null, 2)}\n`);
  const markdown = [
    `# \`bench/http-bench.js\`, ${report.date}`,
    '',
    `\`${report.command}\``,
    '',
    `Machine: ${report.cpu}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${report.node}${report.postgres ? `, PostgreSQL ${report.postgres}` : ''}. Load (1, 5, 15 min): before \`${report.uptimeBefore}\`, after \`${report.uptimeAfter}\`.`,
    '',
    'Servers alternate round after round; medians. "of bare" is req/s over bare node:http\'s in the same run, "of floor" over the durable floor\'s (node:http + the fsync\'d group-committed ledger, nothing else). Server CPU is every thread of the server process per answered request.',
    '',
    '```',
    text.trimEnd(),
    '```',
    '',
  ].join('\n');
  writeFileSync(`${prefix}.md`, markdown);
  process.stderr.write(`wrote ${prefix}.json and ${prefix}.md\n`);
}

/**
 * The closing event of the ledger (`ledger_closed`) or of the database's usage sink
 * (`usage_closed`), one JSON line that `crosstab serve` prints when it stops, with the sink's
 * `stats` as data: billed calls per durable write (a ledger write or a usage statement's
 * commit) and the mean time one was in flight, over the whole run.
 */
function durableWrites(stderr) {
  for (const line of stderr.split('\n')) {
    if (!line.startsWith('{')) continue;
    let entry;
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    const stats = entry.stats;
    if ((entry.event !== 'ledger_closed' && entry.event !== 'usage_closed') || stats === undefined || stats.durableWrites === 0) continue;
    return {
      recordsPerDurableWrite: Number((stats.records / stats.durableWrites).toFixed(1)),
      microsPerDurableWrite: Math.round((stats.writeMs * 1000) / stats.durableWrites),
    };
  }
  return {};
}

/** The 304s of an autocannon run. */
function notModified(run) {
  return run.statusCodeStats?.['304']?.count ?? 0;
}

/** POST /crosstab with a made-up, well-formed API key, a new one for every request. */
function unknownKeyRequest(request) {
  return {
    ...request,
    setupRequest: (req) => ({ ...req, headers: { ...req.headers, 'service-engine-authorizer': `ctk_${randomBytes(32).toString('base64url')}` } }),
  };
}

/** User + system CPU of a process (all its threads) in µs, from /proc (0 where there is no /proc). */
function processCpuMicros(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    // utime and stime, fields 14 and 15 of stat(5), in clock ticks (USER_HZ, 100 on Linux).
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return 0;
  }
}

/** The event-loop (main) thread's time on a CPU and waiting for one, in ns, from /proc (undefined where there is none). */
function eventLoopThread(pid) {
  try {
    const [running, waiting] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ').map(Number);
    return { running, waiting };
  } catch {
    return undefined;
  }
}

/** Shares of `wallNs` the event-loop thread spent running, waiting for a CPU, and idle. */
function eventLoopShares(before, after, wallNs) {
  if (before === undefined || after === undefined) return undefined;
  const running = (after.running - before.running) / wallNs;
  const waiting = (after.waiting - before.waiting) / wallNs;
  return { running, waiting, idle: Math.max(0, 1 - running - waiting) };
}

/**
 * Starts a server child and waits for its "listening on http://host:port/..." line. Its
 * stderr is kept (stderr()): the ledger's closing event says how long its durable writes took.
 * With a pin, it starts under `taskset -c SERVER_CPU` (which execs node: the child's pid is node's).
 */
function start(args, pin) {
  const [file, argv] = onServerCpu(pin, process.execPath, args);
  const child = spawn(file, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
  let errors = '';
  child.stderr.on('data', (chunk) => (errors += chunk));
  return new Promise((resolveStart, reject) => {
    let output = '';
    child.once('exit', (code) => reject(new Error(`server exited with ${code}: ${output}${errors}`)));
    child.stdout.on('data', (chunk) => {
      output += chunk;
      const match = /listening on (http:\/\/[^/\s]+)/.exec(output);
      if (match) resolveStart({ child, origin: match[1], stderr: () => errors });
    });
  });
}
