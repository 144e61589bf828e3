import { withBody, type CrosstabHandler, type HandlerResponse } from '../http/index.js';
import { PORTAL_ICON_SVG } from './assets.js';
import type { Portal } from './portal-handler.js';
import { tableAccept } from './tables-workbench.js';

/** The icon browsers ask for at /favicon.ico (an SVG, which browsers take from that path too). */
const FAVICON: HandlerResponse = { status: 200, headers: { 'content-type': 'image/svg+xml', 'cache-control': 'public, max-age=86400', 'x-content-type-options': 'nosniff' }, body: PORTAL_ICON_SVG };
const isFavicon = (path: string): boolean => path.split('?', 1)[0] === '/favicon.ico';

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
  }
  return {
    basePath: api.basePath,
    maxBodyBytes: api.maxBodyBytes,
    owns: (path) => portal.owns(path) || api.owns(path) || isFavicon(path),
    handle: async (request) => {
      const path = request.path ?? '';
      if (portal.owns(path)) return portal.handle(await withBody(request));
      if (isFavicon(path) && !api.owns(path) && (request.method === 'GET' || request.method === 'HEAD')) return { ...FAVICON, body: request.method === 'HEAD' ? '' : FAVICON.body };
      return api.handle(request);
    },
    close: () => api.close(),
  };
}
