import { withBody, type CrosstabHandler } from '../http/index.js';
import type { Portal } from './portal-handler.js';

/**
 * One handler for a node:http server: the portal under its base path, everything else to
 * the API handler (which answers 404 outside its own base path). `listen()` serves it.
 */
export function mountPortal(api: CrosstabHandler, portal: Portal): CrosstabHandler {
  return {
    basePath: api.basePath,
    maxBodyBytes: api.maxBodyBytes,
    owns: (path) => portal.owns(path) || api.owns(path),
    handle: async (request) => (portal.owns(request.path ?? '') ? portal.handle(await withBody(request)) : api.handle(request)),
    close: () => api.close(),
  };
}
