import type { ResponseStream } from './answer-budget.js';

/** The answer of an operation that sets its own status and headers (caching, content type). */
export interface OperationReply {
  status: number;
  /** Lower-case names; `vary` is added to what the handler already varies on. */
  headers: Record<string, string>;
  /** Text, bytes sent as they are, or a stream sent in chunks (a table answer). */
  body: string | Uint8Array | ResponseStream;
}

export function isOperationReply(value: unknown): value is OperationReply {
  return typeof value === 'object' && value !== null && 'status' in value && 'headers' in value && 'body' in value;
}

/** Copies the reply's headers onto the response's, joining the two `vary` lists. */
export function applyReplyHeaders(headers: Record<string, string>, reply: OperationReply): void {
  const vary = [headers['vary'], reply.headers['vary']].filter((value) => value !== undefined).join(', ');
  Object.assign(headers, reply.headers);
  if (vary !== '') headers['vary'] = vary;
}
