import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Express } from 'express';
import { clientErrorHandler } from './errors/client-error';
import { renderRequestlessErrorPage } from './errors/error-page';

/**
 * The HTTP server for the app, with its requests and responses born with Express's prototypes.
 *
 * Express re-parents every request and response (`Object.setPrototypeOf(req, app.request)`). On an
 * object node:http has already built, that swap costs V8 its fast paths in node's own HTTP code
 * for the rest of the request: about four fifths of the CPU time of a bare Express answer on the
 * benchmark machine (bench/README.md, "Express's prototype swap"). When node:http builds them from
 * constructors whose prototypes already are app.request and app.response, Express's swap is a
 * no-op and nothing else changes: same middleware, same objects, same behaviour.
 */
export function createAppServer(app: Express): Server {
  const server = createPrototypedServer(app);
  // Node's own refusals (431, 400) in the app's error shapes, not bare statuses (http/errors/client-error.ts).
  server.on(
    'clientError',
    clientErrorHandler((status, description, done) => renderRequestlessErrorPage(app, status, description, done)),
  );
  return server;
}

function createPrototypedServer(app: Express): Server {
  // node:http's constructors are plain functions, so they can initialise an object of ours. Were
  // they ever ES classes (not callable that way), the server is the ordinary one: slower, same answers.
  // (Reflect.construct would accept a class, but its objects are as slow as the swapped ones.)
  if (isClass(IncomingMessage) || isClass(ServerResponse)) return createServer(app);
  function AppRequest(this: IncomingMessage, ...args: ConstructorParameters<typeof IncomingMessage>) {
    (IncomingMessage as unknown as (...a: unknown[]) => void).apply(this, args);
  }
  AppRequest.prototype = app.request;
  function AppResponse(this: ServerResponse, ...args: ConstructorParameters<typeof ServerResponse>) {
    (ServerResponse as unknown as (...a: unknown[]) => void).apply(this, args);
  }
  AppResponse.prototype = app.response;
  return new Server(
    {
      IncomingMessage: AppRequest as unknown as typeof IncomingMessage,
      ServerResponse: AppResponse as unknown as typeof ServerResponse,
    },
    app,
  );
}

const isClass = (f: unknown) => /^class\b/.test(Function.prototype.toString.call(f));
