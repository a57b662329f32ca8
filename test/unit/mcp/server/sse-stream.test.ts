import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterEach, expect, it, vi } from 'vitest';
import { openSseStream, type SseStream } from '../../../../src/mcp/server/sse-stream.js';

const cleanup: Array<() => void> = [];
afterEach(() => {
  for (const done of cleanup.splice(0)) done();
});

it('cuts off a client that stops reading once the bound waits for it, instead of queueing without end', async () => {
  let response!: ServerResponse;
  const server = createServer((_request, res) => void (response = res));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
  cleanup.push(() => {
    socket.destroy();
    server.closeAllConnections();
    server.close();
  });
  // A client that sends its GET and then never reads a byte.
  socket.pause();
  socket.write('GET /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: text/event-stream\r\n\r\n');
  await once(server, 'request');
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
