import type { IncomingMessage, ServerResponse } from 'node:http';
import fp from 'fastify-plugin';
import { errors } from '../errors.js';
import { afterThisTurn } from '../shared/after-this-turn.js';

function hasBody(raw: IncomingMessage): boolean {
  const length = raw.headers['content-length'];
  return (length !== undefined && length !== '0') || raw.headers['transfer-encoding'] !== undefined;
}

/**
 * True while a request still has body bytes to come. A response sent then (a 401 before the body was read)
 * should close the connection: keeping it alive would make the server read and discard the rest of the
 * body first, at whatever pace the client sends it.
 */
export function bodyPending(raw: IncomingMessage): boolean {
  return !raw.complete && hasBody(raw);
}

/**
 * Bounds the time a client may take to send a request body (`server.bodyTimeoutMs`, counted from when the
 * body starts being read): a client trickling a body a byte a second would otherwise keep its socket, its
 * buffers and its request open for as long as it likes. At the deadline the body reader gets an error
 * (status 408), so the request answers 408 `TG_REQUEST_TIMEOUT` through the normal error path, which
 * closes the connection (`bodyPending`) — the rest of the body is never read.
 */
export const bodyDeadlinePlugin = fp(
  async (app) => {
    const arm = (raw: IncomingMessage, payload: NodeJS.EventEmitter, response: ServerResponse): void => {
      // Complete, or the client left (Node destroys the request when its socket closes): nothing to bound.
      if (raw.complete || raw.destroyed) return;
      const timeoutMs = app.gateway.config.server.bodyTimeoutMs;
      const timer = setTimeout(() => {
        // Only while Fastify's body reader listens: an error event nobody listens to would throw.
        if (raw.complete || payload.listenerCount('error') === 0) return;
        payload.emit('error', new errors.TG_REQUEST_TIMEOUT(`request body not received within ${timeoutMs} ms`));
      }, timeoutMs);
      // Cleared when the response closes (it closes once, so `on`: no once-wrapper per request). A body that
      // ends first leaves the timer armed until then, and harmless: the callback sees the request complete.
      response.on('close', () => clearTimeout(timer));
    };
    // preParsing runs while Node's parser is still on the request's headers (it runs ticks and microtasks when
    // the headers' callback returns), so the body is not read yet even when it came in the same read, as
    // nearly every body does. The deadline is armed once that read's callback is over instead (afterThisTurn):
    // a body complete by then needs no timer, no clear and no `close` listener. The deadline starts that much
    // later than preParsing (the rest of the loop turn).
    app.addHook('preParsing', (request, reply, payload, done) => {
      const raw = request.raw;
      if (bodyPending(raw)) afterThisTurn(() => arm(raw, payload, reply.raw));
      done(null, payload);
    });
  },
  // The deadline is read from the live config, so a reload changes it.
  { name: 'toolgate-body-deadline', dependencies: ['toolgate-gateway'] },
);
