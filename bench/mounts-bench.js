#!/usr/bin/env node
// What each mount of the REST handler costs its framework: requests per second through the
// mount next to the same framework (same process, same run) answering a static JSON route.
//
//   node bench/mounts-bench.js [--duration 2] [--rounds 2] [--connections 10] [--json]   (after npm run build)
//
// One child process per mount (node:http, Fastify, Express, Hono, listen()) serves:
//   GET /static        the framework's own route answering the bytes of GET /v1/docs, prebuilt
//                      (listen() has no routes of its own: a bare node:http server beside it);
//   GET /v1/docs       the same bytes through the mount and the handler (no key, no billing);
//   POST /v1/crosstab  a billed query on the bundled GSS survey (key file, ledger on tmpfs).
// autocannon runs here, on loopback: a warm-up of each route, then --rounds rounds alternating
// between the three routes; medians are reported. Answers are checked against
// each other across mounts before timing, and each ledger against its 200s afterwards.
// Results: a printed table, --json, and bench/results/<date>-mounts.{json,md}.
import autocannon from 'autocannon';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { describeMachine } from './lib/machine.js';
import { fmtInt, markdownTable, textTable } from './lib/report.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const MOUNTS = ['node:http', 'fastify', 'express', 'hono', 'listen()'];
const QUERY = { SurveyCode: 'GSS', PopulationBaseCode: 'year=2024', TargetCodes: ['sex=2', 'degree=3..4'] };
const JSON_TYPE = 'application/json; charset=utf-8';


/** Child: the handler behind one mount, and the framework's static route beside it. */
async function serve(mount, keys, ledger) {
  const { openDataset } = await import(join(root, 'dist', 'index.js'));
  const http = await import(join(root, 'dist', 'http', 'index.js'));
  const dataset = await openDataset(join(root, 'datasets', 'build', 'gss.arrow'));
  const handler = await http.createCrosstabHandler({ datasets: [dataset], keys, usage: ledger });
  const docs = (await handler.handle({ method: 'GET', path: '/v1/docs', headers: {} })).body;
  const staticHeaders = { 'content-type': JSON_TYPE, 'content-length': String(Buffer.byteLength(docs)) };
  const { createServer } = await import('node:http');
  const bare = (_req, res) => res.writeHead(200, staticHeaders).end(docs);
  let port;
  let staticPort;
  if (mount === 'node:http') {
    const api = http.createNodeListener(handler);
    const server = createServer((req, res) => (req.url === '/static' ? bare(req, res) : api(req, res)));
    await new Promise((done) => server.listen(0, '127.0.0.1', done));
    port = server.address().port;
  } else if (mount === 'listen()') {
    // listen() serves the handler alone: its static peer is a bare node:http server beside it.
    port = (await http.listen(handler, { port: 0 })).port;
    const server = createServer(bare);
    await new Promise((done) => server.listen(0, '127.0.0.1', done));
    staticPort = server.address().port;
  } else if (mount === 'fastify') {
    const { default: Fastify } = await import('fastify');
    const app = Fastify();
    app.get('/static', (_request, reply) => reply.headers(staticHeaders).send(docs));
    await app.register(http.crosstabFastify(handler));
    await app.listen({ port: 0, host: '127.0.0.1' });
    port = app.server.address().port;
  } else if (mount === 'express') {
    const { default: express } = await import('express');
    const app = express();
    app.use(http.crosstabExpress(handler));
    app.get('/static', (_req, res) => res.set(staticHeaders).send(docs));
    const server = await new Promise((done) => {
      const listening = app.listen(0, '127.0.0.1', () => done(listening));
    });
    port = server.address().port;
  } else if (mount === 'hono') {
    const { Hono } = await import('hono');
    const { serve: honoServe } = await import('@hono/node-server');
    const app = new Hono();
    app.use(http.crosstabHono(handler));
    app.get('/static', (c) => c.body(docs, 200, staticHeaders));
    const server = await new Promise((done) => {
      const listening = honoServe({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => done(listening));
    });
    port = server.address().port;
  } else {
    throw new Error(`unknown mount ${mount}`);
  }
  process.stdout.write(`${JSON.stringify({ port, staticPort: staticPort ?? port })}\n`);
}

function startChild(mount, keys, ledger) {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--serve', mount, keys, ledger], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((done, fail) => {
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const line = out.split('\n')[0];
      if (out.includes('\n')) done({ child, ...JSON.parse(line) });
    });
    child.once('exit', (code) => fail(new Error(`the ${mount} server exited (${code}) before listening`)));
  });
}

const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** User + system CPU seconds of process `pid` so far (every thread), or undefined without /proc. */
function cpuSeconds(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

/** autocannon against `url`; adds the server's CPU µs per answered request (steadier than req/s on a shared machine). */
async function run(url, connections, duration, init = {}, serverPid) {
  const before = cpuSeconds(serverPid);
  const result = await new Promise((done, fail) => {
    autocannon({ url, connections, duration, ...init }, (error, outcome) => (error ? fail(error) : done(outcome)));
  });
  const after = cpuSeconds(serverPid);
  result.cpuUsPerRequest = before === undefined || after === undefined ? null : ((after - before) * 1e6) / Math.max(1, result.requests.total);
  return result;
}

async function fetchText(url, init) {
  const response = await fetch(url, init);
  return `${response.status} ${await response.text()}`;
}

async function main() {
  const { values: options } = parseArgs({
    options: {
      duration: { type: 'string', default: '2' },
      rounds: { type: 'string', default: '2' },
      connections: { type: 'string', default: '10' },
      json: { type: 'boolean', default: false },
    },
  });
  const duration = Number(options.duration);
  const rounds = Number(options.rounds);
  const connections = Number(options.connections);
  if (!existsSync(join(root, 'dist', 'http', 'index.js')) || !existsSync(join(root, 'datasets', 'build', 'gss.arrow'))) {
    throw new Error('bench/mounts-bench.js needs the build: run `npm run build` first.');
  }
  const { addApiKey } = await import(join(root, 'dist', 'http', 'index.js'));
  const scratch = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'crosstab-mounts-'));
  const keysPath = join(scratch, 'keys.json');
  const { apiKey } = await addApiKey(keysPath, { surveys: ['_ALL_'], groups: ['_ALL_'], name: 'bench' });
  const post = { method: 'POST', headers: { 'content-type': 'application/json', 'service-engine-authorizer': apiKey }, body: JSON.stringify(QUERY) };
  const machine = describeMachine();
  const rows = [];
  let expected;
  try {
    for (const mount of MOUNTS) {
      const ledger = join(scratch, `usage-${mount.replace(/\W/g, '')}.ndjson`);
      const server = await startChild(mount, keysPath, ledger);
      try {
        const api = `http://127.0.0.1:${server.port}`;
        const staticUrl = `http://127.0.0.1:${server.staticPort}/static`;
        // Same answers on every mount before timing (the static route serves the docs' bytes).
        const answers = { docs: await fetchText(`${api}/v1/docs`), static: await fetchText(staticUrl), crosstab: await fetchText(`${api}/v1/crosstab`, post) };
        if (answers.static !== answers.docs) throw new Error(`${mount}: /static does not answer the bytes of GET /v1/docs; something is off`);
        expected ??= answers;
        if (answers.docs !== expected.docs || answers.crosstab !== expected.crosstab) throw new Error(`${mount} answers differently from ${MOUNTS[0]}; something is off`);
        if (!answers.crosstab.startsWith('200 ')) throw new Error(`${mount}: POST /v1/crosstab answered ${answers.crosstab.slice(0, 200)}`);
        const routes = { static: [staticUrl, {}], docs: [`${api}/v1/docs`, {}], crosstab: [`${api}/v1/crosstab`, post] };
        const runs = { static: [], docs: [], crosstab: [] };
        for (const [url, init] of Object.values(routes)) await run(url, connections, 0.5, init);
        // Rounds alternate between the routes, so that a change in the machine's load hits all three.
        for (let round = 0; round < rounds; round++) {
          for (const [name, [url, init]] of Object.entries(routes)) runs[name].push(await run(url, connections, duration, init, server.child.pid));
        }
        const billed = readFileSync(ledger, 'utf8').split('\n').filter((line) => line.trim() !== '').length;
        // One 200 before timing and the warm-up's, then the timed ones (autocannon stops with requests in flight).
        const all = Object.values(runs).flat();
        const errors = all.reduce((sum, result) => sum + result.errors + result.non2xx, 0);
        if (billed < runs.crosstab.reduce((sum, result) => sum + result['2xx'], 1)) throw new Error(`${mount}: ${billed} ledger records, fewer than the 200s`);
        const median = (results, of) => {
          const sorted = results.map(of).sort((a, b) => a - b);
          return sorted.length % 2 ? sorted[(sorted.length - 1) / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
        };
        const rps = (result) => result.requests.average;
        const cpu = (result) => result.cpuUsPerRequest ?? Number.NaN;
        rows.push({
          mount,
          staticRps: median(runs.static, rps),
          docsRps: median(runs.docs, rps),
          crosstabRps: median(runs.crosstab, rps),
          staticCpuUs: median(runs.static, cpu),
          docsCpuUs: median(runs.docs, cpu),
          crosstabCpuUs: median(runs.crosstab, cpu),
          errors,
        });
      } finally {
        server.child.kill('SIGKILL');
      }
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  const node = rows[0];
  const report = {
    date: new Date().toISOString(),
    machine,
    loadAverageAtEnd: loadavg(),
    connections,
    durationSeconds: duration,
    rounds,
    rows: rows.map((row) => ({
      ...row,
      docsOfStatic: row.docsRps / row.staticRps,
      crosstabOfStatic: row.crosstabRps / row.staticRps,
      // CPU per request the mount and handler add to the framework's own static answer.
      docsAddedCpuUs: row.docsCpuUs - row.staticCpuUs,
      // ... beyond what the handler adds on the node:http mount (no framework at all).
      docsAdapterCpuUs: row.docsCpuUs - row.staticCpuUs - (node.docsCpuUs - node.staticCpuUs),
    })),
  };
  const us = (value) => (Number.isFinite(value) ? value.toFixed(0) : '-');
  const header = ['mount', 'static req/s', 'GET /v1/docs req/s', 'of static', 'POST /v1/crosstab req/s', 'of static', 'CPU µs/req static', 'docs', 'crosstab', 'docs - static', 'of it beyond node:http', 'errors'];
  const table = report.rows.map((row) => [
    row.mount,
    fmtInt(Math.round(row.staticRps)),
    fmtInt(Math.round(row.docsRps)),
    row.docsOfStatic.toFixed(2),
    fmtInt(Math.round(row.crosstabRps)),
    row.crosstabOfStatic.toFixed(2),
    us(row.staticCpuUs),
    us(row.docsCpuUs),
    us(row.crosstabCpuUs),
    us(row.docsAddedCpuUs),
    us(row.docsAdapterCpuUs),
    String(row.errors),
  ]);
  const facts = `${report.date}  node ${machine.node}  ${machine.cores} x ${machine.cpuModel}  load ${machine.loadAverageAtStart[0].toFixed(1)} at start, ${report.loadAverageAtEnd[0].toFixed(1)} at end  ${rounds} rounds of ${duration} s x ${connections} connections per route (medians)`;
  if (options.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else process.stdout.write(`${facts}\n\n${textTable(header, table)}\n`);
  const results = join(root, 'bench', 'results');
  mkdirSync(results, { recursive: true });
  const stem = join(results, `${report.date.slice(0, 10)}-mounts`);
  writeFileSync(`${stem}.json`, `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(
    `${stem}.md`,
    `# Mounts: each framework with the handler mounted, against its own static JSON route\n\n\`node bench/mounts-bench.js\`, ${facts}.\n\n` +
      `"static route" is the framework answering the bytes of GET /v1/docs from a prebuilt string (for listen(), a bare node:http server in the same process); ` +
      `"of static" divides req/s by it. CPU µs/req is the server process's user + system time (every thread) per answered request; "docs - static" is what the handler and the mount add to the framework's own answer of the same bytes, and "beyond node:http" what is left after subtracting the same difference on the node:http mount (the handler alone): the adapter's cost. POST /v1/crosstab is billed (key file, ledger on tmpfs).\n\n` +
      `${markdownTable(header, table)}\n`,
  );
}

if (process.argv[2] === '--serve') await serve(process.argv[3], process.argv[4], process.argv[5]);
else await main();
