import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ServiceMetrics } from './service-metrics.js';
import { originForm } from './request-path.js';

/**
 * One readiness check: resolves undefined when it passes, else what is wrong (shown in the
 * /readyz body). A check that takes longer than the probe timeout fails.
 */
export type ReadinessCheck = () => string | undefined | Promise<string | undefined>;

export interface MetricsServerOptions {
  port: number;
  /** Default 127.0.0.1: the metrics port has no authentication; never expose it publicly. */
  host?: string;
  metrics: ServiceMetrics;
  /** The checks of GET /readyz, by name, run in order; all must pass for a 200. */
  readiness: Record<string, ReadinessCheck>;
  /** Most time one check may take (ms). Default 2000. */
  checkTimeoutMs?: number;
}

export interface RunningMetricsServer {
  readonly server: Server;
  readonly port: number;
  /** e.g. `http://127.0.0.1:9464`. */
  readonly url: string;
  close(): Promise<void>;
}

async function runCheck(check: ReadinessCheck, timeoutMs: number): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      Promise.resolve().then(check),
      new Promise<string>((resolve) => {
        timer = setTimeout(() => resolve(`no answer within ${timeoutMs} ms`), timeoutMs);
      }),
    ]);
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The operators' listener, apart from the API port: GET /metrics (Prometheus text format),
 * GET /healthz (200 while the process runs its event loop) and GET /readyz (200 when every
 * readiness check passes, else 503 naming the failing ones). HEAD works as GET.
 */
export async function listenMetrics(options: MetricsServerOptions): Promise<RunningMetricsServer> {
  const host = options.host ?? '127.0.0.1';
  const timeoutMs = options.checkTimeoutMs ?? 2000;
  const { metrics } = options;
  const readiness = Object.entries(options.readiness);
  const check = async (): Promise<{ ready: boolean; checks: Record<string, string> }> => {
    const checks: Record<string, string> = {};
    let ready = true;
    for (const [name, run] of readiness) {
      const problem = await runCheck(run, timeoutMs);
      checks[name] = problem ?? 'ok';
      if (problem !== undefined) ready = false;
    }
    metrics.ready = ready;
    return { ready, checks };
  };
  const server = createServer({ keepAliveTimeout: 5000, requestTimeout: 10_000 }, (request, response) => {
    const send = (status: number, type: string, body: string): void => {
      response.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store' });
      response.end(request.method === 'HEAD' ? undefined : body);
    };
    const path = originForm(request.url ?? '/').split('?')[0];
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.setHeader('allow', 'GET, HEAD');
      send(405, 'text/plain; charset=utf-8', 'Use GET.\n');
      return;
    }
    if (path === '/healthz') {
      // Alive: this process runs its event loop (it answers), whatever its readiness.
      send(200, 'application/json; charset=utf-8', '{"status":"alive"}\n');
    } else if (path === '/readyz') {
      void check().then(({ ready, checks }) => send(ready ? 200 : 503, 'application/json; charset=utf-8', `${JSON.stringify({ status: ready ? 'ready' : 'not_ready', checks })}\n`));
    } else if (path === '/metrics') {
      // crosstab_ready as /readyz would answer now (the store probe is cached for a second).
      check()
        .then(() => metrics.registry.metrics())
        .then(
          (text) => send(200, metrics.registry.contentType, text),
          (error: unknown) => send(500, 'text/plain; charset=utf-8', `${(error as Error).message}\n`),
        );
    } else {
      send(404, 'text/plain; charset=utf-8', 'GET /metrics, /healthz or /readyz.\n');
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    server,
    port,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
