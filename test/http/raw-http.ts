// HTTP over a bare TCP socket: the request goes out byte for byte as written (no URL
// normalization, a body that stops short of its Content-Length), and the answer is read as
// it arrives, with whether and when the server closed the connection.
import { connect, type Socket } from 'node:net';

export interface RawAnswer {
  status: number;
  /** Lower-case names. */
  headers: Record<string, string>;
  body: string;
}

export interface RawConnection {
  readonly socket: Socket;
  write(text: string): void;
  /** The first complete answer (headers and Content-Length bytes of body). */
  answer(): Promise<RawAnswer>;
  /** Resolves when the server has closed the connection. */
  closed(): Promise<void>;
  destroy(): void;
}

export async function openRaw(port: number, host = '127.0.0.1'): Promise<RawConnection> {
  const socket = connect(port, host);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  let received = Buffer.alloc(0);
  const waiters: Array<() => void> = [];
  const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('data', (chunk: Buffer) => {
    received = Buffer.concat([received, chunk]);
    for (const wake of waiters.splice(0)) wake();
  });
  socket.on('error', () => {});
  const parse = (): RawAnswer | undefined => {
    const end = received.indexOf('\r\n\r\n');
    if (end === -1) return undefined;
    const [statusLine, ...lines] = received.subarray(0, end).toString('latin1').split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    if (received.length < end + 4 + length) return undefined;
    return { status: Number((statusLine ?? '').split(' ')[1]), headers, body: received.subarray(end + 4, end + 4 + length).toString('utf8') };
  };
  return {
    socket,
    write: (text) => socket.write(text),
    async answer() {
      for (;;) {
        const answer = parse();
        if (answer !== undefined) return answer;
        if (socket.destroyed || socket.readableEnded) throw new Error(`The connection closed before a whole answer; received ${JSON.stringify(received.toString('latin1'))}`);
        await Promise.race([new Promise<void>((resolve) => waiters.push(resolve)), ended]);
      }
    },
    closed: () => ended,
    destroy: () => socket.destroy(),
  };
}

/** One GET with the request target exactly as given; the connection is closed after the answer. */
export async function rawGet(port: number, target: string): Promise<RawAnswer> {
  const connection = await openRaw(port);
  connection.write(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
  try {
    return await connection.answer();
  } finally {
    connection.destroy();
  }
}
