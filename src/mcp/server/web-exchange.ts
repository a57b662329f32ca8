// The SDK v2 serving entry is fetch-shaped (a web Request in, a web Response out): this turns one Fastify
// request into that Request and writes the Response back on the hijacked reply (docs/architecture.md#mcp-endpoint).
import { once } from 'node:events';
import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * The web Request of one POST whose body Fastify has already parsed: the headers as sent, no body (the
 * parsed value is handed to the SDK beside it), and a signal that aborts when the client goes away — unless
 * `signal` is false, for a request whose handlers follow the client's leaving on their own.
 */
export function toWebRequest(request: FastifyRequest, reply: FastifyReply, signal = true): Request {
  const url = `${request.protocol}://${request.host}${request.url}`;
  let web: Request;
  if (!signal) web = new Request(url, { method: request.method });
  else {
    const gone = new AbortController();
    const response = reply.raw;
    const onClose = (): void => {
      if (!response.writableFinished) gone.abort(new Error('client closed the connection'));
    };
    if (response.closed) onClose();
    else response.on('close', onClose);
    web = new Request(url, { method: request.method, signal: gone.signal });
  }
  copyHeaders(request.headers, web.headers);
  return web;
}

/**
 * The headers as sent, each value of a repeated header appended, onto the new Request's own Headers: cheaper than
 * a HeadersInit, which the Request converts as a whole (a record or a list) before it fills its Headers the same way.
 */
function copyHeaders(from: IncomingHttpHeaders, to: Headers): void {
  for (const name in from) {
    const value = from[name];
    if (typeof value === 'string') to.append(name, value);
    else if (value !== undefined) for (const one of value) to.append(name, one);
  }
}

/** Writes a web Response on the raw reply (hijacked by the caller), streaming its body as it comes. */
export async function sendWebResponse(reply: FastifyReply, response: Response, extraHeaders: Record<string, string>): Promise<void> {
  const raw = reply.raw;
  const headers: Record<string, string> = { ...extraHeaders };
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  if (response.body === null) {
    raw.writeHead(response.status, headers);
    raw.end();
    return;
  }
  if (isJson(response)) {
    // One JSON message: written whole with its length, not chunk by chunk through a reader.
    let body: Buffer;
    try {
      body = Buffer.from(await response.arrayBuffer());
    } catch {
      raw.destroy();
      return;
    }
    headers['content-length'] = String(body.byteLength);
    raw.writeHead(response.status, headers);
    raw.end(body);
    return;
  }
  raw.writeHead(response.status, headers);
  const reader = response.body.getReader();
  // A client that leaves ends the stream on our side too (an SSE subscription would otherwise stay open).
  const gone = new Promise<void>((resolve) => raw.once('close', resolve));
  void gone.then(() => reader.cancel().catch(() => undefined));
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!raw.write(value)) await Promise.race([once(raw, 'drain'), gone]);
    }
    raw.end();
  } catch {
    raw.destroy();
  }
}

const isJson = (response: Response): boolean => response.headers.get('content-type')?.startsWith('application/json') === true;
