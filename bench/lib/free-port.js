// A free TCP port on 127.0.0.1, for the servers the tests and benches start on loopback
// (nginx, PostgreSQL, ClickHouse shards, crosstab serve replicas).
import { createServer } from 'node:net';

/** A port free when asked (the OS picks it); a server started on it later may reuse it. */
export function freePort() {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolvePort(port));
    });
  });
}
