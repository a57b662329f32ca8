import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';

/** One server→client event stream (the GET side of MCP streamable HTTP). */
export interface SseStream {
  /** Writes the 200 and the event-stream headers (once); sending or closing first does it too. */
  start(): void;
  /** Writes one JSON-RPC message as an SSE `message` event; false when the stream is gone. */
  send(message: JSONRPCMessage): boolean;
  /** A comment line: keeps proxies from timing the stream out, and tells a dead peer from a quiet one. */
  ping(): boolean;
  close(): void;
  readonly closed: boolean;
}

/**
 * An SSE response on `response`, its headers not yet written: the caller decides when the client may see
 * the 200 (after the stream is known to the other replicas). A client that stops reading is cut off once
 * `maxBufferedBytes` wait for it, so a slow reader costs this replica a bounded amount of memory, never an
 * unbounded queue.
 */
export function openSseStream(response: ServerResponse, headers: OutgoingHttpHeaders, maxBufferedBytes: number, onClose: () => void): SseStream {
  const start = (): void => {
    if (response.headersSent || response.destroyed) return;
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', connection: 'keep-alive', 'x-accel-buffering': 'no', ...headers });
    response.flushHeaders();
  };
  let closed = false;
  response.once('close', () => {
    closed = true;
    onClose();
  });
  const write = (chunk: string): boolean => {
    if (closed || response.destroyed) return false;
    start();
    if (response.writableLength > maxBufferedBytes) {
      response.destroy();
      return false;
    }
    response.write(chunk);
    return true;
  };
  return {
    start,
    send: (message) => write(`event: message\ndata: ${JSON.stringify(message)}\n\n`),
    ping: () => write(': ping\n\n'),
    close() {
      if (closed) return;
      start();
      response.end();
    },
    get closed() {
      return closed;
    },
  };
}
