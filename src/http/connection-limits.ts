import { readdirSync, readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { CrosstabError, ErrorCode } from '../index.js';

/**
 * Descriptors kept free beyond those open when the server starts (datasets, the ledger or the
 * accounts database, worker threads): for what opens later - relation files the embedded
 * database first touches (it closes its least recently used ones when the process runs out,
 * but only those it holds), a PostgreSQL pool's sockets (10), outgoing connections such as an
 * SSO issuer's keys, a reopened ledger.
 */
export const DESCRIPTOR_MARGIN = 128;
const MAX_DEFAULT_CONNECTIONS = 4096;

/** Connection limits of `listen()`; every field is optional. */
export interface ConnectionLimits {
  /**
   * Most open connections; further ones are closed as they arrive, so the process never runs
   * out of file descriptors. Default: the soft `ulimit -n` minus the descriptors open when
   * `listen()` is called minus 128, at least 16 and at most 4096 (1024 where the limit cannot
   * be read). Open datasets and the access store before calling `listen()`.
   */
  maxConnections?: number;
  /** Most open connections from one IP address; further ones get a 503 and are closed. Default 64. */
  maxConnectionsPerAddress?: number;
  /**
   * A connection with no traffic in either direction for this long is closed, unless an
   * answer on it is being made (its status line not yet sent). Default 30000 ms.
   */
  idleTimeoutMs?: number;
}

/** The soft limit on open files of this process (Linux), or undefined where it cannot be read. */
export function descriptorLimit(): number | undefined {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((row) => row.startsWith('Max open files'));
    const soft = line?.slice('Max open files'.length).trim().split(/\s+/)[0];
    const limit = Number(soft);
    return Number.isInteger(limit) && limit > 0 ? limit : undefined;
  } catch {
    return undefined;
  }
}

/** File descriptors this process has open now (Linux), or undefined where they cannot be counted. */
export function openDescriptors(): number | undefined {
  try {
    // Minus the descriptor of the directory being listed.
    return readdirSync('/proc/self/fd').length - 1;
  } catch {
    return undefined;
  }
}

/**
 * The default `maxConnections`: what `ulimit -n` leaves after the descriptors open now and the
 * margin. The embedded database alone holds about a hundred, so a constant reserve would let
 * connections take the descriptors the process needs.
 */
export function defaultMaxConnections(): number {
  const descriptors = descriptorLimit();
  if (descriptors === undefined) return 1024;
  const reserved = (openDescriptors() ?? 64) + DESCRIPTOR_MARGIN;
  return Math.max(16, Math.min(MAX_DEFAULT_CONNECTIONS, descriptors - reserved));
}

function positiveInteger(value: number | undefined, option: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) {
    throw new CrosstabError(ErrorCode.invalidOption, `${option} must be a positive integer; got ${String(value)}.`, { field: option });
  }
  return value;
}

/** Validates `limits` and fills in the defaults. Throws CrosstabError naming the bad option. */
export function resolveConnectionLimits(limits: ConnectionLimits): Required<ConnectionLimits> {
  const maxConnections = limits.maxConnections === undefined ? defaultMaxConnections() : positiveInteger(limits.maxConnections, 'maxConnections', 0);
  return {
    maxConnections,
    maxConnectionsPerAddress: positiveInteger(limits.maxConnectionsPerAddress, 'maxConnectionsPerAddress', Math.min(64, maxConnections)),
    idleTimeoutMs: positiveInteger(limits.idleTimeoutMs, 'idleTimeoutMs', 30_000),
  };
}

const TOO_MANY =
  'HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json; charset=utf-8\r\nConnection: close\r\nContent-Length: ';

/** Told of the API port's connections (ServiceMetrics.connections). */
export interface ConnectionObserver {
  opened(): void;
  closed(): void;
  refused(reason: 'max_connections' | 'per_address'): void;
}

/**
 * Applies the limits to a node:http server: `maxConnections`, an idle timeout after which a
 * socket is destroyed, and a per-address count past which new connections get a 503 and are
 * closed. `body` is the JSON error body of that 503.
 */
export function applyConnectionLimits(server: Server, limits: Required<ConnectionLimits>, body: string, observer?: ConnectionObserver): void {
  server.maxConnections = limits.maxConnections;
  // net.Server closes connections past maxConnections itself, and says so with 'drop'.
  if (observer !== undefined) server.on('drop', () => observer.refused('max_connections'));
  // listen() destroys a socket that times out unless a request on it is in work.
  server.setTimeout(limits.idleTimeoutMs);
  const open = new Map<string, number>();
  const response = `${TOO_MANY}${Buffer.byteLength(body)}\r\n\r\n${body}`;
  // Before node:http's own listener, so a refused socket is gone before any request on it is parsed.
  server.prependListener('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const count = (open.get(address) ?? 0) + 1;
    if (count > limits.maxConnectionsPerAddress) {
      observer?.refused('per_address');
      // Best effort: a fresh socket takes the short answer at once; the socket is closed either way.
      socket.write(response);
      socket.destroy();
      return;
    }
    open.set(address, count);
    observer?.opened();
    socket.once('close', () => {
      observer?.closed();
      const left = (open.get(address) ?? 1) - 1;
      if (left === 0) open.delete(address);
      else open.set(address, left);
    });
  });
}
