// The node-based mounts of the REST handler for tests that cut connections: each listening on
// loopback with the server's open sockets in view, to see when it has noticed a client's
// close. A test passes the mount functions it tests (from src/, or the built dist/ where a
// table answer must stream from the table worker file), and gets the GSS dataset and the test
// key file made before its tests and closed after them.
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { serve as honoServe } from '@hono/node-server';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { afterAll, beforeAll, inject } from 'vitest';
import type * as Http from '../../src/http/index.js';
import { makeKeyFile, tempDir, type TestKeys } from './support.js';

/** The mount functions of one build of the package (src/ or dist/), for handlers of type `Handler`. */
export interface MountFunctions<Handler> {
  listen(handler: Handler, options: { port: number }): Promise<{ port: number; server: Server; close(graceMs?: number): Promise<void> }>;
  createNodeListener(handler: Handler): ReturnType<typeof Http.createNodeListener>;
  crosstabExpress(handler: Handler): ReturnType<typeof Http.crosstabExpress>;
  crosstabFastify(handler: Handler): ReturnType<typeof Http.crosstabFastify>;
  crosstabHono(handler: Handler): ReturnType<typeof Http.crosstabHono>;
}

export interface StartedMount {
  port: number;
  /** The server's open sockets: empty once it has seen every client's close. */
  sockets: Set<Socket>;
  /** Cuts the connections, closes the server, then the handler. */
  close(): Promise<void>;
}

export interface SocketMount<Handler> {
  name: string;
  /** Whether the mount sees the response's delivery (fetch-only Hono hands a Response to its runtime). */
  seesDelivery: boolean;
  start(handler: Handler): Promise<StartedMount>;
}

function tracked(server: Server): Set<Socket> {
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  return sockets;
}

function served(server: Server, handler: { close(): Promise<void> }): StartedMount {
  return {
    port: (server.address() as AddressInfo).port,
    sockets: tracked(server),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await handler.close();
    },
  };
}

const listening = (server: Server): Promise<void> => new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const honoServer = (fetch: (request: Request, env?: unknown) => Response | Promise<Response>): Promise<Server> =>
  new Promise((resolve) => {
    const server = honoServe({ fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(server as Server)) as Server;
  });

/** listen(), node:http, Express, Fastify, Hono on @hono/node-server, and Hono fetch-only (as on runtimes without node:http). */
export function socketMounts<Handler extends { close(): Promise<void> }>(http: MountFunctions<Handler>): Array<SocketMount<Handler>> {
  return [
    {
      name: 'listen()',
      seesDelivery: true,
      async start(handler) {
        const running = await http.listen(handler, { port: 0 });
        return { port: running.port, sockets: tracked(running.server), close: () => running.close(100) };
      },
    },
    {
      name: 'node:http',
      seesDelivery: true,
      async start(handler) {
        const server = createServer(http.createNodeListener(handler));
        await listening(server);
        return served(server, handler);
      },
    },
    {
      name: 'Express',
      seesDelivery: true,
      async start(handler) {
        const app = express();
        app.use(http.crosstabExpress(handler));
        const server = createServer(app);
        await listening(server);
        return served(server, handler);
      },
    },
    {
      name: 'Fastify',
      seesDelivery: true,
      async start(handler) {
        const app = Fastify();
        await app.register(http.crosstabFastify(handler));
        await app.listen({ port: 0, host: '127.0.0.1' });
        return {
          port: (app.server.address() as AddressInfo).port,
          sockets: tracked(app.server),
          close: async () => {
            app.server.closeAllConnections();
            await app.close();
            await handler.close();
          },
        };
      },
    },
    {
      name: 'Hono (@hono/node-server)',
      seesDelivery: true,
      async start(handler) {
        const app = new Hono();
        app.use(http.crosstabHono(handler));
        return served(await honoServer(app.fetch), handler);
      },
    },
    {
      // Only the fetch Request (no `env.incoming`), whose signal says the client has gone.
      name: 'Hono (fetch only)',
      seesDelivery: false,
      async start(handler) {
        const app = new Hono();
        app.use(http.crosstabHono(handler));
        return served(await honoServer((request: Request) => app.fetch(request)), handler);
      },
    },
  ];
}

/** The test key file and the GSS dataset (opened by `open`: src/'s or dist/'s openDataset), made before the file's tests, closed after them. */
export function keysAndGss<Opened extends { close(): unknown }>(open: (path: string) => Promise<Opened>): { readonly keys: TestKeys; readonly dataset: Opened } {
  const fixture = {} as { keys: TestKeys; dataset: Opened };
  beforeAll(async () => {
    fixture.keys = await makeKeyFile(tempDir());
    fixture.dataset = await open(inject('testDatasets').gss);
  });
  afterAll(() => fixture.dataset?.close());
  return fixture;
}
