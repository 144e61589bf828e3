import { isResponseStream } from './answer-budget.js';
import type { CallerCheck } from './caller.js';
import type { ApiKeyRecord } from './key-file.js';
import { isoNow } from './clock.js';
import { nextTurn } from './event-loop-turn.js';
import { parseJsonBody } from './crosstab-request.js';
import type { AccessLogEntry, HandlerRequest } from './handler-types.js';
import { headerOf, isJsonContentType } from './headers.js';
import { CLIENT_GONE, clientGone, type ArrivedBodyRequest, type RequestBody } from './request-body.js';
import { isBilledAnswer, type OperationReply, type Route, type RouteResult, type ServiceContext } from './route.js';
import { fromThrown, isServiceError, quote, serviceError, type ServiceError } from './service-error.js';
import type { UsageRecord, UsageSink } from './usage-ledger.js';

/** One matched request: the route, and what the request brings. */
export interface RouteCall {
  route: Route;
  request: HandlerRequest;
  body: RequestBody;
  requestId: string;
  entry: AccessLogEntry;
  params: Record<string, string>;
  /** A caller already known in-process (CrosstabHandler.handleFor): not authenticated again, still admitted. */
  caller?: ApiKeyRecord;
  /** Set by the pipeline once the answer's usage record is durable (the answer is billed). */
  billed?: UsageRecord;
}

/**
 * Runs a matched route: its checks in a fixed order, every one decided from the headers
 * before the body is read (caller, Content-Type, declared size), then the body (size, JSON),
 * the operation, and the usage record of a billed answer (durable before the 200 is sent).
 */
export function createRoutePipeline(context: { service: ServiceContext; checkCaller: CallerCheck; usage: UsageSink }): (call: RouteCall) => Promise<ServiceError | OperationReply | string> {
  const { service, checkCaller, usage } = context;
  const { maxBodyBytes } = service;
  const tooLarge = (route: Route): ServiceError =>
    serviceError('payload_too_large', `The request body is larger than ${maxBodyBytes} bytes.`, route.tooLargeHint ?? 'Send a smaller body, or ask the provider for a larger request limit.');

  return async (call) => {
    const { route, request, body, requestId, entry, params, caller: known } = call;
    const checked = route.auth ? checkCaller(request, entry, route.billed, known) : undefined;
    const caller = checked instanceof Promise ? await checked : checked;
    if (caller !== undefined && isServiceError(caller)) return caller;
    const refused = route.accepts?.(request);
    if (refused !== undefined) return refused;
    let json: unknown;
    if (route.body === 'json') {
      if (!isJsonContentType(headerOf(request.headers, 'content-type'))) {
        return serviceError('unsupported_media_type', 'Content-Type must be application/json.', 'Send the body as JSON with the header `Content-Type: application/json`.');
      }
      // A compressed body would be refused as text that is not UTF-8, with a hint to re-encode it.
      const coding = headerOf(request.headers, 'content-encoding');
      if (coding !== undefined && !/^\s*(identity)?\s*$/i.test(coding)) {
        return serviceError('unsupported_media_type', `Content-Encoding ${quote(coding, 40)} is not accepted: the body must be JSON as it is.`, 'Send the JSON body uncompressed, without a Content-Encoding header.');
      }
      // node:http takes chunked apart and hands any other transfer coding (gzip, chunked) on as it came.
      const transfer = headerOf(request.headers, 'transfer-encoding');
      if (transfer !== undefined && !/^\s*chunked\s*$/i.test(transfer)) {
        return serviceError('unsupported_media_type', `Transfer-Encoding ${quote(transfer, 40)} is not accepted: only chunked is.`, 'Send the JSON body uncompressed, with Content-Length or Transfer-Encoding: chunked.');
      }
      if (Number(headerOf(request.headers, 'content-length') ?? 0) > maxBodyBytes) return tooLarge(route);
      const read = body.read();
      const bytes = read instanceof Promise ? await read : read;
      if (isServiceError(bytes)) return bytes;
      if ((typeof bytes === 'string' ? Buffer.byteLength(bytes) : bytes.byteLength) > maxBodyBytes) return tooLarge(route);
      const parsed = parseJsonBody(bytes);
      if (isServiceError(parsed)) return parsed;
      json = parsed.json;
    }
    // One context object per request, made with its caller rather than spread into a second.
    const handled = route.auth
      ? route.handle({ request, requestId, entry, params, service, json, caller: caller as NonNullable<typeof caller> })
      : route.handle({ request, requestId, entry, params, service, json });
    // An answer made at once (a crosstab from the cell cache) is taken without a turn of the microtask queue.
    const result: RouteResult = handled instanceof Promise ? await handled : handled;
    if (!isBilledAnswer(result)) return result;
    if (!route.billed || caller === undefined) return result.body;
    // A streamed answer not sent is stopped, so its worker and its share of the answer budget are freed.
    const unsent = (refusal: ServiceError): ServiceError => {
      const answer = result.body;
      if (typeof answer !== 'string' && isResponseStream(answer.body)) answer.body.cancel();
      return refusal;
    };
    // A record only for an answer that can still be sent: a client that has gone is not billed.
    // Asked after one turn of the event loop: an answer made without waiting on I/O (a cached
    // or small crosstab) is ready before node:http has read what arrived after the request, so
    // a client that closed or reset its connection right after sending would be seen as gone
    // only during the record's flush, and billed for an answer it never gets.
    await nextTurn();
    // A request known gone only by its signal (a fetch Request's, aborted on the connection's
    // 'close' event) learns it in the loop's close phase, after that turn: one more.
    if ((request as ArrivedBodyRequest)[CLIENT_GONE] === undefined) await nextTurn();
    if (clientGone(request)) return unsent(serviceError('client_closed_request', 'The client closed the connection before the answer; nothing was billed.', 'Wait for the answer.'));
    // Made field by field rather than with a spread of an optional accountId: JSON.stringify of it in the ledger is faster.
    const record: UsageRecord = { time: isoNow(), requestId, keyId: caller.id, survey: result.usage.survey, targets: result.usage.targets, operation: result.usage.operation };
    if (caller.accountId !== undefined) record.accountId = caller.accountId;
    try {
      await usage.record(record);
    } catch (error) {
      // A store that is unavailable says so once in its own event; any other failure is logged here.
      const known = fromThrown(error);
      if (known !== undefined) return unsent(known);
      entry.error = (error as Error).stack ?? String(error);
      return unsent(serviceError('unavailable', 'The usage of this request could not be recorded; it was not billed.', 'Retry later; if it persists, report the X-Request-Id response header to the provider.'));
    }
    entry.billed = true;
    call.billed = record;
    return result.body;
  };
}
