/**
 * The bound on table answer bytes held on the thread that serves requests, across all
 * requests: each answer takes its share before its usage is recorded (a streamed answer its
 * window, STREAM_BYTES_IN_FLIGHT; a workbook its size) and gives it back when it has been
 * sent, has failed or was cancelled. An answer that does not fit is refused (503 with
 * Retry-After), never queued: nothing is billed, and no request waits on another's socket.
 */
export class AnswerBudget {
  private used = 0;

  constructor(readonly maxBytes: number) {}

  /** Bytes taken now. */
  get inFlight(): number {
    return this.used;
  }

  /** Takes `bytes`, or answers undefined when they do not fit; the release gives them back once. */
  take(bytes: number): (() => void) | undefined {
    if (this.used + bytes > this.maxBytes) return undefined;
    this.used += bytes;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.used -= bytes;
    };
  }
}

/** A body sent in chunks after its headers (a streamed table answer); `content-length` says its size. */
export interface ResponseStream extends AsyncIterable<Uint8Array> {
  readonly byteLength: number;
  /** Stops it without sending it (the answer was refused or the client has gone). */
  cancel(): void;
}

export function isResponseStream(value: unknown): value is ResponseStream {
  return typeof value === 'object' && value !== null && typeof (value as ResponseStream).cancel === 'function' && Symbol.asyncIterator in value;
}

/** `bytes` as a ResponseStream of one chunk, calling `closed` once when it is sent or cancelled. */
export function wholeStream(bytes: Uint8Array, closed: () => void): ResponseStream {
  return {
    byteLength: bytes.byteLength,
    cancel: closed,
    async *[Symbol.asyncIterator]() {
      try {
        yield bytes;
      } finally {
        closed();
      }
    },
  };
}

/** Reads a ResponseStream whole (for callers that cannot take a stream). */
export async function collectStream(stream: ResponseStream): Promise<Uint8Array> {
  let whole: Uint8Array | undefined;
  let at = 0;
  for await (const chunk of stream) {
    // A body of one chunk (a workbook) is that chunk.
    if (at === 0 && chunk.byteLength === stream.byteLength) whole = chunk;
    else {
      if (whole === undefined || whole.byteLength !== stream.byteLength) {
        const grown = new Uint8Array(stream.byteLength);
        if (whole !== undefined) grown.set(whole.subarray(0, at));
        whole = grown;
      }
      whole.set(chunk, at);
    }
    at += chunk.byteLength;
  }
  whole ??= new Uint8Array(0);
  if (at !== stream.byteLength) throw new Error(`a streamed answer sent ${at} of its ${stream.byteLength} bytes`);
  return whole;
}
