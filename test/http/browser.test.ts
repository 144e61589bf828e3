// A real browser: headless Chromium on one loopback origin calls the service on another.
// The allowed origin succeeds after a real CORS preflight; a disallowed origin is blocked.
// Chromium is required (CI installs it: apt-get install -y chromium); without it this FAILS.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDataset, toServiceResponse, type Dataset } from '../../src/index.js';
import { createCrosstabHandler, createNodeListener, type CrosstabHandler } from '../../src/http/index.js';
import { makeKeyFile, readLedger, tempDir, type TestKeys } from './support.js';
import { startChromium, type RunningChromium } from '../support/chromium.js';

const REQUEST = { SurveyCode: 'GSS', PopulationBaseCode: 'year=2024', TargetCodes: ['sex=2', 'degree=3..4'] };

async function listenOnLoopback(listener: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ server: Server; origin: string }> {
  const server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe('CORS in a real browser (headless Chromium)', () => {
  const paths = inject('testDatasets');
  let dataset: Dataset;
  let keys: TestKeys;
  let handler: CrosstabHandler;
  let ledgerPath: string;
  let service: { server: Server; origin: string };
  let allowedPage: { server: Server; origin: string };
  let otherPage: { server: Server; origin: string };
  let browser: Browser | undefined;
  let chromium: RunningChromium | undefined;
  const seen: string[] = [];

  beforeAll(async () => {
    dataset = await openDataset(paths.gss);
    const dir = tempDir();
    keys = await makeKeyFile(dir);
    ledgerPath = join(dir, 'usage.ndjson');
    const page = (_req: IncomingMessage, res: ServerResponse) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>portal</title>');
    allowedPage = await listenOnLoopback(page);
    otherPage = await listenOnLoopback(page);
    // One failed key per window: the second unknown key is refused 429 with Retry-After.
    handler = await createCrosstabHandler({ datasets: [dataset], keys: keys.path, usage: ledgerPath, corsOrigins: [allowedPage.origin], authFailures: { maxFailures: 1, windowSeconds: 600 } });
    const listener = createNodeListener(handler);
    service = await listenOnLoopback((req, res) => {
      seen.push(`${req.method} ${req.headers.origin ?? '-'}`);
      listener(req, res);
    });
    chromium = await startChromium();
    browser = chromium.browser;
  });

  afterAll(async () => {
    await chromium?.close();
    for (const running of [service, allowedPage, otherPage]) {
      running?.server.closeAllConnections();
      running?.server.close();
    }
    await handler?.close();
    dataset?.close();
  });

  async function fetchFrom(pageOrigin: string): Promise<{ ok: boolean; status?: number; body?: unknown; error?: string }> {
    const context = browser!.contexts()[0] ?? (await browser!.newContext());
    const tab = await context.newPage();
    try {
      await tab.goto(`${pageOrigin}/`);
      return await tab.evaluate(
        async ({ url, key, body }) => {
          try {
            const response = await fetch(url, {
              method: 'POST',
              headers: { 'Content-Type': 'application/json', 'Service-Engine-Authorizer': key },
              body: JSON.stringify(body),
            });
            return { ok: true, status: response.status, body: await response.json() };
          } catch (error) {
            return { ok: false, error: String(error) };
          }
        },
        { url: `${service.origin}/v1/crosstab`, key: keys.all, body: REQUEST },
      );
    } finally {
      await tab.close();
    }
  }

  it('lets the allowed origin through after a real preflight', async () => {
    seen.length = 0;
    const result = await fetchFrom(allowedPage.origin);
    expect(result.error).toBeUndefined();
    expect(result.status).toBe(200);
    expect(result.body).toEqual(toServiceResponse(await dataset.crosstab({ base: REQUEST.PopulationBaseCode, targets: REQUEST.TargetCodes })));
    expect(seen).toEqual([`OPTIONS ${allowedPage.origin}`, `POST ${allowedPage.origin}`]);
    expect(readLedger(ledgerPath)).toHaveLength(1);
  });

  it('blocks a disallowed origin at the preflight, so nothing is queried or billed', async () => {
    seen.length = 0;
    const result = await fetchFrom(otherPage.origin);
    expect(result.ok).toBe(false);
    expect(result.error).toMatch(/TypeError|Failed to fetch/);
    expect(seen).toEqual([`OPTIONS ${otherPage.origin}`]);
    expect(readLedger(ledgerPath)).toHaveLength(1);
  });

  it('lets a script read WWW-Authenticate of a 401 and Retry-After of a 429 (Access-Control-Expose-Headers)', async () => {
    const context = browser!.contexts()[0] ?? (await browser!.newContext());
    const tab = await context.newPage();
    try {
      await tab.goto(`${allowedPage.origin}/`);
      const answers = await tab.evaluate(
        async ({ url, body }) => {
          const unknownKey = 'ctk_' + 'A'.repeat(43);
          const read = async () => {
            const response = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json', 'Service-Engine-Authorizer': unknownKey }, body: JSON.stringify(body) });
            return { status: response.status, wwwAuthenticate: response.headers.get('WWW-Authenticate'), retryAfter: response.headers.get('Retry-After'), requestId: response.headers.get('X-Request-Id') };
          };
          return [await read(), await read()];
        },
        { url: `${service.origin}/v1/crosstab`, body: REQUEST },
      );
      const [unauthorized, limited] = answers;
      expect(unauthorized?.status).toBe(401);
      expect(unauthorized?.wwwAuthenticate).toMatch(/Service-Engine-Authorizer/);
      expect(unauthorized?.requestId).toMatch(/^[0-9a-f-]{36}$/);
      expect(limited?.status).toBe(429);
      expect(Number(limited?.retryAfter)).toBeGreaterThan(0);
    } finally {
      await tab.close();
    }
  });
});
