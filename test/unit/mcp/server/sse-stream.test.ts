import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterEach, expect, it, vi } from 'vitest';
import { openSseStream, type SseStream } from '../../../../src/mcp/server/sse-stream.js';

const cleanup: Array<() => void> = [];
afterEach(() => {
  for (const done of cleanup.splice(0)) done();
});

/** A loopback server and a raw client socket; `request()` sends the GET and resolves with the server's response. */
async function loopback(): Promise<{ socket: Socket; request(): Promise<ServerResponse> }> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
  cleanup.push(() => {
    socket.destroy();
    server.closeAllConnections();
    server.close();
  });
  return {
    socket,
    async request() {
      const responded = once(server, 'request') as Promise<[unknown, ServerResponse]>;
      socket.write('GET /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: text/event-stream\r\n\r\n');
      return (await responded)[1];
    },
  };
}

it('cuts off a client that stops reading once the bound waits for it, instead of queueing without end', async () => {
  const { socket, request } = await loopback();
  // A client that sends its GET and then never reads a byte.
  socket.pause();
  const response = await request();
  let closed = false;
  const stream: SseStream = openSseStream(response, {}, 64 * 1024, () => (closed = true));
  const big = { jsonrpc: '2.0' as const, method: 'notifications/message', params: { data: 'x'.repeat(64 * 1024) } };
  let sent = 0;
  // Bounded: the socket buffers of loopback hold a few MB at most; 2000 × 64 KiB is far more.
  while (sent < 2000 && stream.send(big)) {
    sent += 1;
    if (sent % 20 === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  expect(sent).toBeLessThan(2000);
  await vi.waitFor(() => expect(closed).toBe(true), { timeout: 2000 });
  expect(stream.closed).toBe(true);
  expect(stream.send(big)).toBe(false);
});

it('writes no status line until started, so the caller decides when the client may see the 200', async () => {
  const { socket, request } = await loopback();
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
  const response = await request();
  const stream = openSseStream(response, { 'mcp-session-id': 's1' }, 64 * 1024, () => undefined);
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(response.headersSent).toBe(false);
  expect(received).toBe('');
  stream.start();
  stream.start();
  await vi.waitFor(() => expect(received).toMatch(/^HTTP\/1\.1 200 OK\r\n/), { timeout: 2000 });
  expect(received).toContain('content-type: text/event-stream');
  expect(received).toContain('mcp-session-id: s1');
  expect(received.match(/HTTP\/1\.1/g)).toHaveLength(1);
});
