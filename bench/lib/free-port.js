// Free TCP ports on 127.0.0.1, for the servers the tests and benches start on loopback
// (nginx, PostgreSQL, ClickHouse shards, crosstab serve replicas).
import { createServer } from 'node:net';

/** A port free when asked (the OS picks it); a server started on it later may reuse it. */
export async function freePort() {
  return (await freePorts(1))[0];
}

/**
 * `count` distinct ports free when asked: every listener stays open until all have their
 * port, so the OS cannot hand out one port twice (asked one at a time, a port closed before
 * the next is asked for can come back: two ClickHouse shards once got the same one).
 */
export async function freePorts(count) {
  const servers = [];
  try {
    for (let i = 0; i < count; i++) {
      const server = createServer();
      servers.push(server);
      await new Promise((resolveListen, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', resolveListen);
      });
    }
    return servers.map((server) => server.address().port);
  } finally {
    await Promise.all(servers.map((server) => new Promise((resolveClose) => (server.listening ? server.close(() => resolveClose()) : resolveClose()))));
  }
}
