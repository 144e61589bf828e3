import { readRequestBody, type CrosstabHandler } from '../http/index.js';
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
    async handle(request) {
      if (!portal.owns(request.path ?? '')) return api.handle(request);
      // The portal reads its forms whole (at most maxBodyBytes + 1 bytes); a body cut off by the client is empty.
      const body = await readRequestBody(request.body, api.maxBodyBytes).catch(() => '');
      return portal.handle({ ...request, body });
    },
    close: () => api.close(),
  };
}
