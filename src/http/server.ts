import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CrosstabHandler } from './handler.js';
import { createNodeListener } from './node-shim.js';

export interface RunningServer {
  readonly server: Server;
  /** e.g. `http://127.0.0.1:8080/v1`. */
  readonly url: string;
  readonly port: number;
  /**
   * Graceful shutdown: stops accepting connections, lets in-flight requests finish (their
   * usage records are fsync'd), then closes the handler. Connections still open after
   * `graceMs` are cut.
   */
  close(graceMs?: number): Promise<void>;
}

/** Serves the handler with node:http on `host:port` (port 0 = any free port). */
export async function listen(handler: CrosstabHandler, options: { port: number; host?: string }): Promise<RunningServer> {
  const host = options.host ?? '127.0.0.1';
  const server = createServer({ keepAliveTimeout: 5000 }, createNodeListener(handler));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  let closing: Promise<void> | undefined;
  return {
    server,
    url: `http://${shownHost}:${port}${handler.basePath}`,
    port,
    close(graceMs = 10_000) {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        // Idle keep-alive connections that become idle after a response are closed as they go.
        const sweep = setInterval(() => server.closeIdleConnections(), 50);
        const cut = setTimeout(() => server.closeAllConnections(), graceMs);
        await closed;
        clearInterval(sweep);
        clearTimeout(cut);
        await handler.close();
      })();
      return closing;
    },
  };
}
