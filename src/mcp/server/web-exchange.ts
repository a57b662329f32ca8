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
  const headers = webHeaders(request.headers);
  const url = `${request.protocol}://${request.host}${request.url}`;
  if (!signal) return new Request(url, { method: request.method, headers });
  const gone = new AbortController();
  const response = reply.raw;
  const onClose = (): void => {
    if (!response.writableFinished) gone.abort(new Error('client closed the connection'));
  };
  if (response.closed) onClose();
  else response.on('close', onClose);
  return new Request(url, { method: request.method, headers, signal: gone.signal });
}

/**
 * The headers as the web Request takes them: Node's own record when every value is one string (the Request copies
 * it once, where a Headers built first was copied twice), else each value of a repeated header appended.
 */
function webHeaders(headers: IncomingHttpHeaders): HeadersInit {
  if (allStrings(headers)) return headers;
  const list: Array<[string, string]> = [];
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) list.push([name, one]);
  }
  return list;
}

/** Every value one string, and no symbol key (which the Request would refuse to copy). */
function allStrings(headers: IncomingHttpHeaders): headers is Record<string, string> {
  for (const name in headers) if (typeof headers[name] !== 'string') return false;
  return Object.getOwnPropertySymbols(headers).length === 0;
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
