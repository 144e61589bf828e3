import type { FastifyPluginAsync } from 'fastify';
import type { CrosstabHandler } from './handler.js';
import { readNodeBody } from './read-body.js';

/**
 * Fastify plugin: `await app.register(crosstabFastify(handler))` (no `prefix`: the handler
 * owns `basePath`). Inside the plugin the body is left unparsed so the handler sees raw bytes.
 */
export function crosstabFastify(handler: CrosstabHandler): FastifyPluginAsync {
  return async (app) => {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', (_request, _payload, done) => done(null));
    app.all(`${handler.basePath}/*`, async (request, reply) => {
      const body = await readNodeBody(request.raw, handler.maxBodyBytes);
      const response = await handler.handle({ method: request.method, path: request.url, headers: request.headers, body });
      return reply.code(response.status).headers(response.headers).send(response.body);
    });
  };
}
