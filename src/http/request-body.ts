import type { HandlerRequest } from './handler-types.js';
import { headerOf } from './headers.js';
import { serviceError, type ServiceError } from './service-error.js';

/** A request body as read, or why it could not be. */
export type BodyRead = Uint8Array | string | ServiceError;

/** The body of one request, read only if the answer depends on it. */
export interface RequestBody {
  /**
   * The body (at most `maxBodyBytes + 1` bytes), read at most once; or 408 when it has not
   * arrived by the deadline, or 400 when the connection ended before it was whole. Not a
   * promise when the body is here already (given, or held whole by the shim's parser).
   */
  read(): BodyRead | Promise<BodyRead>;
  /**
   * Whether the request declared a body that the handler did not read to its end (never
   * asked for, cut at the limit, too slow): its answer then ends the connection.
   */
  readonly leftUnread: boolean;
}

/**
 * A shim's own way to read a body whose bytes have all arrived already (node-shim: the parser
 * holds as many as Content-Length declares), without the timer and abort signal of
 * `readBody`: nothing more has to come from the network, so the body timeout cannot apply.
 * The bytes themselves when the shim can take them at once, else a promise of them;
 * undefined when they have not all arrived. Internal: not part of HandlerRequest's documented shape.
 */
export const ARRIVED_BODY = Symbol('arrivedBody');

/**
 * A shim's own way to ask whether the client has gone (its connection closed before the
 * answer was written), without making `signal`: an AbortSignal and its close listener cost
 * a request about as much as the crosstab itself, and a billed call only needs to know this
 * once, before its usage record. Internal, like ARRIVED_BODY.
 */
export const CLIENT_GONE = Symbol('clientGone');

/** A request that may carry ARRIVED_BODY and CLIENT_GONE. */
export type ArrivedBodyRequest = HandlerRequest & { [ARRIVED_BODY]?: () => Uint8Array | Promise<Uint8Array> | undefined; [CLIENT_GONE]?: () => boolean };

/** Whether the client of `request` has gone: by the shim's CLIENT_GONE when it has one, else by its signal. */
export function clientGone(request: ArrivedBodyRequest): boolean {
  const gone = request[CLIENT_GONE];
  return gone !== undefined ? gone() : request.signal?.aborted === true;
}

const cutShort = (): ServiceError => serviceError('invalid_request', 'The connection ended before the request body was whole.', 'Send the whole body, as long as its Content-Length says.');

/** Whether the headers announce a body (a Content-Length above 0, or a Transfer-Encoding). */
export function declaresBody(request: HandlerRequest): boolean {
  const length = headerOf(request.headers, 'content-length');
  return (length !== undefined && length.trim() !== '0') || headerOf(request.headers, 'transfer-encoding') !== undefined;
}

/**
 * The body of `request`: the one a shim read already (`body`), or read through `readBody`
 * when asked, until `deadline` (a performance.now() time). `timedOut` is called when the
 * deadline passes first.
 */
export function requestBody(request: ArrivedBodyRequest, options: BodyOptions): RequestBody {
  return new BodyOfRequest(request, options);
}

interface BodyOptions {
  maxBodyBytes: number;
  deadline: number;
  timeoutMs: number;
  timedOut: () => void;
}

/**
 * requestBody's body, as a class: made for every request, and an object literal with a
 * getter and the closures it used were built afresh each time.
 */
class BodyOfRequest implements RequestBody {
  private readonly given: Uint8Array | string | undefined;
  private readonly reader: HandlerRequest['readBody'];
  private readonly arrived: (() => Uint8Array | Promise<Uint8Array> | undefined) | undefined;
  private readonly declared: boolean;
  private whole = false;
  private reading: BodyRead | Promise<BodyRead> | undefined = undefined;

  constructor(
    request: ArrivedBodyRequest,
    private readonly options: BodyOptions,
  ) {
    this.given = request.body;
    this.reader = request.readBody;
    this.arrived = request[ARRIVED_BODY];
    this.declared = this.given === undefined && this.reader !== undefined && declaresBody(request);
  }

  get leftUnread(): boolean {
    return this.declared && !this.whole;
  }

  read(): BodyRead | Promise<BodyRead> {
    if (this.given !== undefined) return this.given;
    const reader = this.reader;
    if (reader === undefined) return new Uint8Array(0);
    if (this.reading === undefined) {
      const arrived = this.arrived;
      const here = arrived?.();
      if (here !== undefined) this.reading = this.fromArrived(here);
      else if (arrived === undefined) this.reading = this.readWithin(reader);
      // Asked while the shim's parser is still handing over the bytes that came with the
      // headers (an operation that needs no await before its body): they are all in once
      // this turn ends, so look again then before arming a timer and an abort signal.
      else
        this.reading = Promise.resolve().then(() => {
          const later = arrived();
          return later === undefined ? this.readWithin(reader) : this.fromArrived(later);
        });
    }
    return this.reading;
  }

  private fromArrived(here: Uint8Array | Promise<Uint8Array>): Uint8Array | Promise<Uint8Array | ServiceError> {
    if (here instanceof Uint8Array) {
      this.whole = here.byteLength <= this.options.maxBodyBytes;
      return here;
    }
    return here.then((bytes) => {
      this.whole = bytes.byteLength <= this.options.maxBodyBytes;
      return bytes;
    }, cutShort);
  }

  private async readWithin(readBody: NonNullable<HandlerRequest['readBody']>): Promise<Uint8Array | ServiceError> {
    const options = this.options;
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), Math.max(0, options.deadline - performance.now()));
    });
    try {
      const bytes = await Promise.race([readBody(controller.signal), late]);
      if (bytes === 'late') {
        controller.abort();
        options.timedOut();
        return serviceError('request_timeout', `The request body did not arrive within ${options.timeoutMs} ms of its headers.`, 'Send the whole body at once, right after the headers.');
      }
      this.whole = bytes.byteLength <= options.maxBodyBytes;
      return bytes;
    } catch {
      return cutShort();
    } finally {
      clearTimeout(timer);
    }
  }
}
