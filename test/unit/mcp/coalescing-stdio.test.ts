import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CoalescingStdioClientTransport } from '../../../src/mcp/coalescing-stdio.js';

// A child that answers each chunk it reads from stdin with a notification counting the messages in it.
const CHUNK_COUNTER = `
process.stdin.on('data', (chunk) => {
  const lines = chunk.toString().split('\\n').filter(Boolean).length;
  process.stdout.write(JSON.stringify({ jsonrpc: '2.0', method: 'chunk', params: { lines } }) + '\\n');
});`;

const note = (index: number): JSONRPCMessage => ({ jsonrpc: '2.0', method: 'notifications/test', params: { index } });

describe('CoalescingStdioClientTransport', () => {
  let transport: CoalescingStdioClientTransport | undefined;
  afterEach(async () => {
    await transport?.close();
  });

  it('sends the messages of one event-loop turn to the child in one write, and later turns on their own', async () => {
    transport = new CoalescingStdioClientTransport({ command: process.execPath, args: ['-e', CHUNK_COUNTER], stderr: 'ignore' });
    const chunks: number[] = [];
    transport.onmessage = (message) => {
      if ('method' in message && message.method === 'chunk') chunks.push((message.params as { lines: number }).lines);
    };
    await transport.start();

    // One turn: a first send, a synchronous pause long enough for the child to read anything already
    // written (the SDK's own transport writes at once, so the child would see a chunk of 1), then four more.
    const sent = [transport.send(note(1))];
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
    for (const index of [2, 3, 4, 5]) sent.push(transport.send(note(index)));
    await Promise.all(sent);
    await vi.waitFor(() => expect(chunks).toEqual([5]));

    await transport.send(note(6));
    await vi.waitFor(() => expect(chunks).toEqual([5, 1]));
  });
});
