/**
 * The protocol by which a table worker streams a JSON or CSV answer to the thread that
 * serves requests, over a MessagePort of the task:
 *
 *   worker → { size }              the answer is ready (statistics done, limits passed) and has this many bytes
 *   main   → { go: true }          send it (after the main thread has recorded the usage)
 *   worker → { chunk } (moved)     at most STREAM_WINDOW_CHUNKS chunks not yet acknowledged
 *   main   → { credit: 1 }         one chunk was written to the socket
 *   worker → { end: true }         every byte was sent; the task ends when the main thread closes the port
 *   main   → { cancel: true }      stop (the task then ends without sending more)
 */

/** Bytes of one streamed chunk. */
export const STREAM_CHUNK_BYTES = 256 * 1024;

/** Chunks a worker may have sent that the main thread has not yet written. */
export const STREAM_WINDOW_CHUNKS = 4;

/**
 * Most answer bytes one streamed answer holds on the main thread at once: its window of
 * chunks, and the chunk the socket is writing.
 */
export const STREAM_BYTES_IN_FLIGHT = STREAM_CHUNK_BYTES * (STREAM_WINDOW_CHUNKS + 1);

export type WorkerStreamMessage = { size: number } | { chunk: ArrayBuffer } | { end: true };
export type MainStreamMessage = { go: true } | { credit: number } | { cancel: true };
