import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** One server→client event stream (the GET side of MCP streamable HTTP). */
export interface SseStream {
  /** Writes one JSON-RPC message as an SSE `message` event; false when the stream is gone. */
  send(message: JSONRPCMessage): boolean;
  /** A comment line: keeps proxies from timing the stream out, and tells a dead peer from a quiet one. */
  ping(): boolean;
  close(): void;
  readonly closed: boolean;
}

/**
 * Starts an SSE response on `response`. A client that stops reading is cut off once `maxBufferedBytes`
 * wait for it, so a slow reader costs this replica a bounded amount of memory, never an unbounded queue.
 */
export function openSseStream(response: ServerResponse, headers: OutgoingHttpHeaders, maxBufferedBytes: number, onClose: () => void): SseStream {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform', connection: 'keep-alive', 'x-accel-buffering': 'no', ...headers });
  response.flushHeaders();
  let closed = false;
  response.once('close', () => {
    closed = true;
    onClose();
  });
  const write = (chunk: string): boolean => {
    if (closed || response.destroyed) return false;
    if (response.writableLength > maxBufferedBytes) {
      response.destroy();
      return false;
    }
    response.write(chunk);
    return true;
  };
  return {
    send: (message) => write(`event: message\ndata: ${JSON.stringify(message)}\n\n`),
    ping: () => write(': ping\n\n'),
    close() {
      if (!closed) response.end();
    },
    get closed() {
      return closed;
    },
  };
}
