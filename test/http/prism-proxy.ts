// The node:http shim behind Stoplight Prism as a validating proxy: the contract suite's requests
// pass through Prism, which judges every answer of the server against the OpenAPI document the
// server itself publishes (GET /v1/docs) and reports what breaks it in its `sl-violations` header.
//
//   test -> front (strips /v1) -> prism proxy -> back (/v1/... again) -> the server
//
// Prism runs without --errors, so it forwards every request, the bad ones too (the suite sends
// bad requests on purpose: request violations are expected and not counted). Prism is the judge,
// not a party to the exchange: its own handling of a request would change what the server is
// asked, so the back hop sends the server the client's exact request (method, path, headers and
// body bytes; Prism parses JSON bodies and sends them re-serialized, and answers a body it cannot
// parse as JSON with its own 400), and the front hop hands the client the server's exact answer
// (Prism re-serializes JSON answers and drops headers such as Connection). What Prism saw and
// judged is that same answer: when its status differs from the server's, or Prism answered
// without asking the server, that is recorded as a failure too.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { Agent, createServer, request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createNodeListener, type CrosstabHandler } from '../../src/http/index.js';
import { repoRoot } from '../support/paths.js';
import { tempDir, type RunningShim } from './support.js';

const prismBin = join(repoRoot, 'node_modules', '.bin', 'prism');
/** The header that carries a request's number from the front hop through Prism to the back hop. */
const TAP = 'x-contract-tap';
/** Headers of one connection, not of the message: never copied from one hop to the next. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'proxy-connection', 'host']);
/** One connection per exchange: nothing kept alive once the test closes the servers. */
const agent = new Agent({ keepAlive: false });

interface Exchange {
  status: number;
  statusMessage: string;
  /** As received: name, value, name, value... */
  rawHeaders: string[];
  body: Buffer;
}

interface Violation {
  location: string[];
  severity: string;
  message: string;
}

function readBody(message: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    message.on('data', (chunk: Buffer) => chunks.push(chunk));
    message.on('end', () => resolve(Buffer.concat(chunks)));
    message.on('error', reject);
  });
}

/** rawHeaders without the hop-by-hop ones (and without the tap). */
function messageHeaders(rawHeaders: string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string;
    const lower = name.toLowerCase();
    if (!HOP_BY_HOP.has(lower) && lower !== TAP) kept.push(name, rawHeaders[i + 1] as string);
  }
  return kept;
}

/** Sends one request (headers as name, value, ... without Host) to 127.0.0.1:port and reads the whole answer. */
function exchange(port: number, method: string, path: string, headers: string[], body: Buffer | undefined): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    // Node adds no Host of its own to headers given as a list.
    const all = ['Host', `127.0.0.1:${port}`, ...headers];
    const outgoing = httpRequest({ host: '127.0.0.1', port, method, path, headers: all as unknown as OutgoingHttpHeaders, agent }, (incoming) => {
      readBody(incoming).then(
        (answer) => resolve({ status: incoming.statusCode ?? 0, statusMessage: incoming.statusMessage ?? '', rawHeaders: incoming.rawHeaders, body: answer }),
        reject,
      );
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

function reply(response: ServerResponse, answer: Exchange): void {
  response.writeHead(answer.status, answer.statusMessage, messageHeaders(answer.rawHeaders));
  response.end(answer.body);
}

/**
 * What Prism is sent as the body: the client's own when Prism can read it. A body under a JSON
 * content type that is not JSON in UTF-8 is one Prism answers itself (400 invalid_json from its
 * HTTP layer, or the body decoded with replacement characters): Prism gets `null` instead (a
 * request violation, as the real body is), and the server still gets the real bytes.
 */
function bodyForPrism(method: string, contentType: string | undefined, body: Buffer): Buffer | undefined {
  if (method === 'GET' || body.length === 0) return undefined;
  const media = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (media !== 'application/json' && !/^application\/[^/]+\+json$/.test(media)) return body;
  try {
    JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
    return body;
  } catch {
    return Buffer.from('null');
  }
}

function listenOnLoopback(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** What the validating proxy found: filled as the suite runs, asserted at its end. */
export interface PrismFindings {
  /** Requests sent through Prism (HEAD and paths outside /v1 go straight to the server). */
  forwarded: number;
  /** Answers Prism judged against an operation of the document (404s and 405s match none). */
  judged: number;
  /** Each response violation, and each answer Prism gave other than the server's. */
  failures: string[];
}

/** Starts `prism proxy` on `document` in front of `upstream`; resolves with its origin. */
async function startPrism(dir: string, upstream: string): Promise<{ origin: string; stop(): Promise<void> }> {
  const child = spawn(prismBin, ['proxy', join(dir, 'openapi.json'), upstream, '--host', '127.0.0.1', '--port', '0', '--cors=false'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  // Prism logs every request: read its output all along (a full pipe would stall it), keep the start.
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const origin = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Prism did not start:\n${output}`)), 60_000);
    const onData = (chunk: Buffer): void => {
      if (output.length < 100_000) output += chunk.toString();
      const listening = /Prism is listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output.replace(/\u001b\[[0-9;]*m/g, ''));
      if (listening) {
        clearTimeout(timer);
        resolve(listening[1] as string);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`Prism exited with ${code}:\n${output}`));
    });
  });
  return {
    origin,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** The contract suite's entry for the node:http shim behind Prism; `findings` is what Prism reported. */
export const prismShim = {
  name: 'node:http behind Prism',
  validating: true,
  async start(handler: CrosstabHandler): Promise<RunningShim & { findings: PrismFindings }> {
    const findings: PrismFindings = { forwarded: 0, judged: 0, failures: [] };
    const server = createServer(createNodeListener(handler));
    const serverPort = await listenOnLoopback(server);
    const direct = `http://127.0.0.1:${serverPort}`;

    // The document the server publishes, as served: its paths are relative to /v1.
    const dir = tempDir('crosstab-prism-');
    const published = await fetch(`${direct}/v1/docs`);
    if (published.status !== 200) throw new Error(`GET /v1/docs answered ${published.status}`);
    writeFileSync(join(dir, 'openapi.json'), await published.text());

    // Requests on their way through Prism, by tap number; the back hop adds the server's answer.
    const inFlight = new Map<string, { method: string; path: string; rawHeaders: string[]; body: Buffer; answer?: Exchange }>();
    let next = 0;

    const back = createServer((request, response) => {
      void (async () => {
        await readBody(request);
        const tap = request.headers[TAP];
        const original = typeof tap === 'string' ? inFlight.get(tap) : undefined;
        if (!original) {
          findings.failures.push(`${request.method} ${request.url}: reached the server's side of Prism without a request of the test`);
          response.writeHead(502).end();
          return;
        }
        original.answer = await exchange(serverPort, original.method, original.path, messageHeaders(original.rawHeaders), original.body);
        reply(response, original.answer);
      })().catch((error: unknown) => {
        findings.failures.push(`${request.method} ${request.url}: ${String(error)}`);
        if (!response.headersSent) response.writeHead(502);
        response.end();
      });
    });
    const backPort = await listenOnLoopback(back);
    const prism = await startPrism(dir, `http://127.0.0.1:${backPort}/v1`);
    const prismPort = Number(new URL(prism.origin).port);

    const front = createServer((request, response) => {
      void (async () => {
        const method = request.method ?? 'GET';
        const path = request.url ?? '/';
        const body = await readBody(request);
        // HEAD straight to the server: Prism 5.14 parses the JSON body of every answer it forwards,
        // and a HEAD answer has none. Paths outside /v1 are in no operation of the document.
        if (method === 'HEAD' || !path.startsWith('/v1/')) {
          reply(response, await exchange(serverPort, method, path, messageHeaders(request.rawHeaders), body));
          return;
        }
        const tap = String(++next);
        findings.forwarded++;
        const entry: { method: string; path: string; rawHeaders: string[]; body: Buffer; answer?: Exchange } = { method, path, rawHeaders: request.rawHeaders, body };
        inFlight.set(tap, entry);
        const toPrism = bodyForPrism(method, request.headers['content-type'], body);
        // The client's headers and the tap; Content-Length of the body Prism gets (its own may differ).
        const kept = messageHeaders(request.rawHeaders);
        const headers: string[] = [TAP, tap];
        for (let i = 0; i < kept.length; i += 2) if ((kept[i] as string).toLowerCase() !== 'content-length') headers.push(kept[i] as string, kept[i + 1] as string);
        // An empty body as Content-Length: 0 (chunked, Prism would read it as a JSON body and find none).
        if (method !== 'GET') headers.push('Content-Length', String(toPrism?.length ?? 0));
        // The document's paths are relative to /v1, and Prism routes the path as it arrives.
        const judged = await exchange(prismPort, method, path.slice('/v1'.length), headers, toPrism).finally(() => inFlight.delete(tap));
        const label = `${method} ${path}`;
        const answer = entry.answer;
        if (!answer) {
          findings.failures.push(`${label}: Prism answered ${judged.status} without asking the server: ${judged.body.toString('utf8').slice(0, 500)}`);
          reply(response, judged);
          return;
        }
        if (judged.status !== answer.status) findings.failures.push(`${label}: Prism answered ${judged.status} where the server answered ${answer.status}`);
        const header = judged.rawHeaders.findIndex((name, i) => i % 2 === 0 && name.toLowerCase() === 'sl-violations');
        const reported = header < 0 ? '[]' : (judged.rawHeaders[header + 1] as string);
        let violations: Violation[];
        try {
          violations = JSON.parse(reported) as Violation[];
        } catch {
          // Prism cuts a long report to 8 KB behind "Too many violations!": read what is left.
          if (reported.includes('"location":["response"')) findings.failures.push(`${label} -> ${answer.status}: ${reported.slice(0, 2000)}`);
          violations = [];
        }
        for (const violation of violations) {
          if (violation.location[0] === 'response') findings.failures.push(`${label} -> ${answer.status}: ${violation.severity} at ${violation.location.join('.')}: ${violation.message}`);
        }
        // Prism judges no answer of a path or method the document does not have (it says so as a request warning).
        if (!violations.some((violation) => violation.message === 'Selected route not found')) findings.judged++;
        reply(response, answer);
      })().catch((error: unknown) => {
        findings.failures.push(`${request.method} ${request.url}: ${String(error)}`);
        if (!response.headersSent) response.writeHead(502);
        response.end();
      });
    });
    const frontPort = await listenOnLoopback(front);

    return {
      origin: `http://127.0.0.1:${frontPort}`,
      direct,
      frameworkErrors: [],
      findings,
      async close() {
        await closeServer(front);
        await prism.stop();
        await closeServer(back);
        await closeServer(server);
      },
    };
  },
};
