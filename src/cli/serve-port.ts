import { createServer } from 'node:net';
import { CrosstabError, ErrorCode } from '../index.js';

/**
 * The refusal for a port `crosstab serve` cannot listen on (EADDRINUSE, EACCES), naming the
 * address and the option; any other listen error is given back as it is.
 */
export function portRefusal(error: NodeJS.ErrnoException, host: string, port: number, option: '--port' | '--metrics-port'): Error {
  if (error.code !== 'EADDRINUSE' && error.code !== 'EACCES') return error;
  const why = error.code === 'EADDRINUSE' ? 'another process is listening on it' : 'this user may not listen on it';
  return new CrosstabError(ErrorCode.invalidOption, `Cannot listen on ${host}:${port} (${error.code}: ${why}).`, {
    field: option,
    hint: `Choose another ${option} (0 = any free port), or stop the process using it.`,
  });
}

/**
 * Listens on `host:port` for a moment and lets it go, so that a busy port is refused before
 * the datasets and the accounts database are opened (seconds, and a database another server
 * may be using) rather than after. Port 0 is always free. A process that takes the port in
 * between is still refused by the listen itself, with the same message.
 */
export async function checkPortFree(host: string, port: number, option: '--port' | '--metrics-port'): Promise<void> {
  if (port === 0) return;
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', (error: NodeJS.ErrnoException) => reject(portRefusal(error, host, port, option)));
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve()));
  });
}
