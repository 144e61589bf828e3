import { headerOf, isServiceError, requestBody, type CrosstabHandler, type HandlerRequest, type HandlerResponse } from '../http/index.js';
import { PORTAL_ICON_SVG } from './assets.js';
import type { Portal } from './portal-handler.js';
import { tableAccept } from './tables-workbench.js';

/** The icon browsers ask for at /favicon.ico (an SVG, which browsers take from that path too). */
const FAVICON: HandlerResponse = { status: 200, headers: { 'content-type': 'image/svg+xml', 'cache-control': 'public, max-age=86400', 'x-content-type-options': 'nosniff' }, body: PORTAL_ICON_SVG };
const isFavicon = (path: string): boolean => path.split('?', 1)[0] === '/favicon.ico';

/** A portal request whose body could not be taken: too slow (408), too large (413), cut short (400). The connection ends with it. */
function bodyRefused(status: number, title: string, text: string): HandlerResponse {
  return {
    status,
    headers: { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': "default-src 'none'", 'x-content-type-options': 'nosniff', 'cache-control': 'no-store', connection: 'close' },
    body: `<!doctype html><html lang="en"><title>${title}</title><main><h1>${title}</h1><p>${text}</p></main></html>`,
  };
}

/**
 * The portal's request with its body read as the API reads its own: at most `maxBodyBytes`,
 * within `bodyTimeoutMs` of the headers; or the refusal that says why not.
 */
async function portalRequest(api: CrosstabHandler, request: HandlerRequest): Promise<{ request: HandlerRequest; unread: boolean } | HandlerResponse> {
  const timeoutMs = api.bodyTimeoutMs ?? 10_000;
  const tooLarge = () => bodyRefused(413, 'Form too large', `The form is larger than ${api.maxBodyBytes} bytes, the most the portal takes. Shorten its fields (fewer lines of rows or columns) and send it again.`);
  if (Number(headerOf(request.headers, 'content-length') ?? 0) > api.maxBodyBytes) return tooLarge();
  const body = requestBody(request, { maxBodyBytes: api.maxBodyBytes, deadline: performance.now() + timeoutMs, timeoutMs, timedOut: () => {} });
  const bytes = await body.read();
  if (isServiceError(bytes)) {
    return bytes.code === 'request_timeout'
      ? bodyRefused(408, 'Form not received', `The form did not arrive within ${timeoutMs} ms. Send it again.`)
      : bodyRefused(400, 'Form not received', 'The connection ended before the form was whole. Send it again.');
  }
  const size = typeof bytes === 'string' ? Buffer.byteLength(bytes) : bytes.byteLength;
  if (size > api.maxBodyBytes) return tooLarge();
  const { readBody: _read, ...rest } = request;
  return { request: { ...rest, body: bytes }, unread: body.leftUnread };
}

/**
 * One handler for a node:http server: the portal under its base path, /favicon.ico, and
 * everything else to the API handler (which answers 404 outside its own base path).
 * `listen()` serves it. The portal's API reference page reads the API's own GET /docs, and
 * its Tables page computes tables with the API's own POST /tables (billed as the API bills).
 */
export function mountPortal(api: CrosstabHandler, portal: Portal): CrosstabHandler {
  portal.useApiDocument(async () => {
    const answer = await api.handle({ method: 'GET', path: `${api.basePath}/docs`, headers: { accept: 'application/json' } });
    if (answer.status !== 200) throw new Error(`GET ${api.basePath}/docs answered ${answer.status}`);
    return JSON.parse(typeof answer.body === 'string' ? answer.body : Buffer.from(answer.body).toString('utf8')) as unknown;
  });
  const handleFor = api.handleFor?.bind(api);
  if (handleFor !== undefined) {
    portal.useTables((caller, spec, format, signal) =>
      handleFor(caller, {
        method: 'POST',
        path: `${api.basePath}/tables`,
        headers: { accept: tableAccept(format), 'content-type': 'application/json' },
        body: JSON.stringify(spec),
        ...(signal === undefined ? {} : { signal }),
      }),
    );
    portal.useTabbooks?.((caller, body, signal) =>
      handleFor(caller, { method: 'POST', path: `${api.basePath}/tabbooks`, headers: { accept: tableAccept('xlsx'), 'content-type': 'application/json' }, body: JSON.stringify(body), ...(signal === undefined ? {} : { signal }) }),
    );
    portal.useAudiences?.((caller, method, path, body) =>
      handleFor(caller, { method, path: `${api.basePath}${path}`, headers: { accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) }),
    );
  }
  return {
    basePath: api.basePath,
    maxBodyBytes: api.maxBodyBytes,
    ...(api.bodyTimeoutMs === undefined ? {} : { bodyTimeoutMs: api.bodyTimeoutMs }),
    owns: (path) => portal.owns(path) || api.owns(path) || isFavicon(path),
    handle: async (request) => {
      const path = request.path ?? '';
      if (portal.owns(path)) {
        const read = await portalRequest(api, request);
        if (!('request' in read)) return read;
        const answer = await portal.handle(read.request);
        return read.unread ? { ...answer, headers: { ...answer.headers, connection: 'close' } } : answer;
      }
      if (isFavicon(path) && !api.owns(path) && (request.method === 'GET' || request.method === 'HEAD')) return { ...FAVICON, body: request.method === 'HEAD' ? '' : FAVICON.body };
      return api.handle(request);
    },
    close: (closeOptions) => api.close(closeOptions),
  };
}
