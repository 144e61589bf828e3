// Shared set-up of the REST adapter tests: real datasets, a real key file, a real ledger,
// real HTTP servers for every framework shim, and the OpenAPI document as the judge.
import SwaggerParser from '@apidevtools/swagger-parser';
import { serve as honoServe } from '@hono/node-server';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { mkdtempSync, readFileSync, existsSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { afterAll, inject } from 'vitest';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  addApiKey,
  buildOpenApiDocument,
  createNodeListener,
  crosstabExpress,
  crosstabFastify,
  crosstabHono,
  errorSchemaNames,
  listen,
  revokeApiKey,
  type CrosstabHandler,
} from '../../src/http/index.js';
import { openDataset, type Dataset } from '../../src/index.js';

const tempDirs: string[] = [];

/** A fresh temporary folder, removed when the test file is done. */
export function tempDir(prefix = 'crosstab-http-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

afterAll(() => {
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
});

/** API keys of the test key file, by role. */
export interface TestKeys {
  path: string;
  /** Every survey, every group. */
  all: string;
  allId: string;
  /** GSS only, every group. */
  gss: string;
  /** GSS only, group demographics only. */
  gssDemographics: string;
  expired: string;
  revoked: string;
}

export async function makeKeyFile(dir: string): Promise<TestKeys> {
  const path = join(dir, 'keys.json');
  const all = await addApiKey(path, { surveys: ['_ALL_'], groups: ['_ALL_'], name: 'all' });
  const gss = await addApiKey(path, { surveys: ['GSS'], groups: ['_ALL_'], name: 'gss' });
  const gssDemographics = await addApiKey(path, { surveys: ['GSS'], groups: ['demographics'], name: 'gss-demographics' });
  const expired = await addApiKey(path, { surveys: ['_ALL_'], groups: ['_ALL_'], name: 'expired', expiresAt: '2020-01-01T00:00:00Z' });
  const revoked = await addApiKey(path, { surveys: ['_ALL_'], groups: ['_ALL_'], name: 'revoked' });
  await revokeApiKey(path, revoked.record.id);
  return {
    path,
    all: all.apiKey,
    allId: all.record.id,
    gss: gss.apiKey,
    gssDemographics: gssDemographics.apiKey,
    expired: expired.apiKey,
    revoked: revoked.apiKey,
  };
}

/** Lines of an NDJSON ledger, skipping a torn last line. */
export function readLedger(path: string): Array<Record<string, unknown>> {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
}

export interface RunningShim {
  /** e.g. http://127.0.0.1:43121 (no base path). */
  origin: string;
  /** The server itself where `origin` is a proxy in front of it (raw-socket tests go there); none: origin is the server. */
  direct?: string;
  /** What reached the framework's own error handler (none for node:http and listen(), which have none). */
  frameworkErrors: unknown[];
  close(): Promise<void>;
}

function nodeServerOrigin(server: Server): string {
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function closeNodeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** Starts `handler` behind each framework and in `listen()`, on a loopback port: every way to mount it. */
export const shims: Array<{ name: string; start(handler: CrosstabHandler): Promise<RunningShim> }> = [
  {
    name: 'node:http',
    async start(handler) {
      const server = createServer(createNodeListener(handler));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return { origin: nodeServerOrigin(server), frameworkErrors: [], close: () => closeNodeServer(server) };
    },
  },
  {
    name: 'fastify',
    async start(handler) {
      const frameworkErrors: unknown[] = [];
      const app = Fastify();
      app.setErrorHandler((error, _request, reply) => {
        frameworkErrors.push(error);
        return reply.send(error);
      });
      await app.register(crosstabFastify(handler));
      await app.listen({ port: 0, host: '127.0.0.1' });
      return { origin: nodeServerOrigin(app.server), frameworkErrors, close: () => app.close() };
    },
  },
  {
    name: 'express',
    async start(handler) {
      const frameworkErrors: unknown[] = [];
      const app = express();
      app.use(crosstabExpress(handler));
      app.use((error: unknown, _req: express.Request, _res: express.Response, next: express.NextFunction) => {
        frameworkErrors.push(error);
        next(error);
      });
      const server = await new Promise<Server>((resolve) => {
        const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
      });
      return { origin: nodeServerOrigin(server), frameworkErrors, close: () => closeNodeServer(server) };
    },
  },
  {
    name: 'hono',
    async start(handler) {
      const frameworkErrors: unknown[] = [];
      const app = new Hono();
      app.use(crosstabHono(handler));
      app.onError((error, c) => {
        frameworkErrors.push(error);
        return c.text('Internal Server Error', 500);
      });
      const server = await new Promise<Server>((resolve) => {
        const listening = honoServe({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(listening as Server)) as Server;
      });
      return { origin: nodeServerOrigin(server), frameworkErrors, close: () => closeNodeServer(server) };
    },
  },
  {
    // Hono as on runtimes without node:http (no `env.incoming`): the fetch Request's own body stream.
    name: 'hono (fetch only)',
    async start(handler) {
      const frameworkErrors: unknown[] = [];
      const app = new Hono();
      app.use(crosstabHono(handler));
      app.onError((error, c) => {
        frameworkErrors.push(error);
        return c.text('Internal Server Error', 500);
      });
      const server = await new Promise<Server>((resolve) => {
        const listening = honoServe({ fetch: (request: Request) => app.fetch(request), port: 0, hostname: '127.0.0.1' }, () => resolve(listening as Server)) as Server;
      });
      return { origin: nodeServerOrigin(server), frameworkErrors, close: () => closeNodeServer(server) };
    },
  },
  {
    name: 'listen()',
    async start(handler) {
      const running = await listen(handler, { port: 0 });
      // No grace: the tests' kept-alive connections are cut at once.
      return { origin: nodeServerOrigin(running.server), frameworkErrors: [], close: () => running.close(0) };
    },
  },
];

/** Validates bodies against the schemas the OpenAPI document declares. */
export class ContractJudge {
  private readonly validators = new Map<string, ValidateFunction>();

  static async create(document: Record<string, unknown> = buildOpenApiDocument({ serverUrl: '/v1', maxBodyBytes: 16384 })): Promise<ContractJudge> {
    await SwaggerParser.validate(structuredClone(document) as never);
    const dereferenced = (await SwaggerParser.dereference(structuredClone(document) as never)) as unknown as Record<string, any>;
    return new ContractJudge(dereferenced);
  }

  private constructor(readonly document: Record<string, any>) {}

  private validator(name: string, schema: object): ValidateFunction {
    let validate = this.validators.get(name);
    if (!validate) {
      const ajv = new Ajv({ strict: false, allErrors: true });
      addFormats.default(ajv);
      // Ajv understands OpenAPI 3.0 `nullable` natively.
      validate = ajv.compile(schema);
      this.validators.set(name, validate);
    }
    return validate;
  }

  /** Throws unless `body` matches the schema declared for this operation and status. */
  check(method: string, path: string, status: number, body: unknown): void {
    const operation = this.document.paths?.[path]?.[method.toLowerCase()];
    let schema = operation?.responses?.[status]?.content?.['application/json']?.schema;
    let name = `${method} ${path} ${status}`;
    if (!schema && status >= 400) {
      // 404 and 405 are not operations of their own: judge them by the component schema.
      name = errorSchemaNames[status] ?? '';
      schema = this.document.components.schemas[name];
    }
    if (!schema) throw new Error(`The OpenAPI document declares no JSON body for ${method} ${path} ${status}`);
    const validate = this.validator(name, schema);
    if (!validate(body)) throw new Error(`${method} ${path} ${status}: body does not match ${name}: ${JSON.stringify(validate.errors)}\n${JSON.stringify(body)}`);
  }

  requestSchemaValid(body: unknown): boolean {
    return this.validator('CrosstabRequest', this.document.components.schemas.CrosstabRequest)(body) as boolean;
  }
}

/** A handler response body as text (a JSON or CSV answer is a string; bytes are decoded as UTF-8). */
export function textOf(body: string | Uint8Array): string {
  return typeof body === 'string' ? body : Buffer.from(body).toString('utf8');
}

/** What a REST test file serves and signs with: see servedFixture. */
export interface ServedFixture {
  /** The test build of GSS, open. */
  gss: Dataset;
  /** A temporary folder of the file's own (ledgers, key files), removed after it (and with the run's folder). */
  dir: string;
  /** A key file of every role (makeKeyFile) in `dir`. */
  keys: TestKeys;
}

/**
 * The set-up most REST test files share, made once per file at its top level
 * (`const { gss, dir, keys } = await servedFixture();`): GSS opened, a temporary folder and a
 * key file in it; with `nhanes`, NHANES opened too; with `judge`, the OpenAPI contract judge.
 * The datasets are closed and the folder removed when the file is done.
 */
export async function servedFixture<Options extends { nhanes?: boolean; judge?: boolean } = Record<never, never>>(
  options: Options = {} as Options,
): Promise<ServedFixture & (Options['nhanes'] extends true ? { nhanes: Dataset } : unknown) & (Options['judge'] extends true ? { judge: ContractJudge } : unknown)> {
  const paths = inject('testDatasets');
  const opened: Dataset[] = [];
  afterAll(() => Promise.all(opened.splice(0).map((dataset) => dataset.close())));
  const open = async (path: string) => {
    const dataset = await openDataset(path);
    opened.push(dataset);
    return dataset;
  };
  const gss = await open(paths.gss);
  // In the run's folder, which the global teardown removes: a run that collects the file
  // without running its hooks (vitest list, a -t that matches none of its tests) leaves nothing.
  const dir = mkdtempSync(join(paths.dir, 'http-'));
  tempDirs.push(dir);
  const keys = await makeKeyFile(dir);
  const nhanes = options.nhanes === true ? await open(paths.nhanes) : undefined;
  const judge = options.judge === true ? await ContractJudge.create() : undefined;
  return { gss, dir, keys, ...(nhanes ? { nhanes } : {}), ...(judge ? { judge } : {}) } as never;
}

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The bytes as sent (not decoded). */
  body: Buffer;
}

/** One request with node:http, which sends only the headers given and never decodes the body. */
export function sendRaw(origin: string, method: string, path: string, headers: Record<string, string> = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${origin}${path}`, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}
