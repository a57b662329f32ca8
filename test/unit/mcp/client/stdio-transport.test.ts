import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Client } from '@modelcontextprotocol/client';
import { callResultSchema } from '../../../../src/mcp/client/direct-call.js';
import { CoalescingStdioTransport } from '../../../../src/mcp/client/stdio-transport.js';

// A child that answers each chunk it reads from stdin with a notification counting the messages in it.
const CHUNK_COUNTER = `
process.stderr.write('ready\\nsecond line\\n');
process.stdin.on('data', (chunk) => {
  const lines = chunk.toString().split('\\n').filter(Boolean).length;
  process.stdout.write(JSON.stringify({ jsonrpc: '2.0', method: 'chunk', params: { lines } }) + '\\n');
});`;

// A child that ignores SIGTERM and the end of its stdin: only SIGKILL stops it.
const STUBBORN = `process.on('SIGTERM', () => {}); process.stdin.resume(); process.stdin.on('end', () => {}); setInterval(() => {}, 1000);`;

const note = (index: number): JSONRPCMessage => ({ jsonrpc: '2.0', method: 'notifications/test', params: { index } });

describe('CoalescingStdioTransport', () => {
  let transport: CoalescingStdioTransport | undefined;
  afterEach(async () => {
    await transport?.close();
  });

  it('sends the messages of one event-loop turn to the child in one write, and later turns on their own', async () => {
    const stderr: string[] = [];
    transport = new CoalescingStdioTransport({ command: process.execPath, args: ['-e', CHUNK_COUNTER], env: {} }, (line) => stderr.push(line));
    const chunks: number[] = [];
    transport.onmessage = (message) => {
      if ('method' in message && message.method === 'chunk') chunks.push((message.params as { lines: number }).lines);
    };
    await transport.start();

    // One turn: a first send, a synchronous pause long enough for the child to read anything already
    // written (an uncorked write would reach it as a chunk of 1), then four more.
    const sent = [transport.send(note(1))];
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
    for (const index of [2, 3, 4, 5]) sent.push(transport.send(note(index)));
    await Promise.all(sent);
    await vi.waitFor(() => expect(chunks).toEqual([5]));

    await transport.send(note(6));
    await vi.waitFor(() => expect(chunks).toEqual([5, 1]));
    expect(stderr).toEqual(['ready', 'second line']);
  });

  it('reports a child that exits by itself through onclose, and refuses sends after it', async () => {
    transport = new CoalescingStdioTransport({ command: process.execPath, args: ['-e', 'process.exit(3)'], env: {} }, () => {});
    const closed = new Promise<void>((resolve) => {
      transport!.onclose = resolve;
    });
    await transport.start();
    await closed;
    await expect(transport.send(note(1))).rejects.toThrow('Not connected');
  });

  it('fails start for a command that does not exist', async () => {
    transport = new CoalescingStdioTransport({ command: '/nonexistent/toolgate-test-binary', args: [], env: {} }, () => {});
    transport.onerror = () => {};
    await expect(transport.start()).rejects.toThrow();
  });

  it('kills a child that ignores the end of stdin and SIGTERM', async () => {
    transport = new CoalescingStdioTransport({ command: process.execPath, args: ['-e', STUBBORN], env: {} }, () => {});
    await transport.start();
    const pid = transport.pid!;
    await transport.close();
    await vi.waitFor(() => expect(() => process.kill(pid, 0)).toThrow(), { timeout: 2_000 });
  }, 15_000);
});

// A legacy server over stdio that answers each tools/call first with a body that is no JSON-RPC message (a result
// that is not an object), then with a line that is not JSON, then with the real answer.
const BAD_THEN_GOOD = `
const { createInterface } = require('node:readline');
const send = (message) => process.stdout.write(JSON.stringify(message) + '\\n');
createInterface({ input: process.stdin }).on('line', (line) => {
  const request = JSON.parse(line);
  if (request.method === 'initialize') send({ jsonrpc: '2.0', id: request.id, result: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'bad', version: '1' } } });
  if (request.method === 'tools/call') {
    send({ jsonrpc: '2.0', id: request.id, result: 5 });
    process.stdout.write('not json\\n');
    send({ jsonrpc: '2.0', id: request.id, result: { content: [{ type: 'text', text: 'fine' }] } });
  }
});`;

describe('CoalescingStdioTransport under the SDK client', () => {
  it('leaves message checks to the client: a malformed message is reported and dropped, the valid answer after it is the result', async () => {
    const transport = new CoalescingStdioTransport({ command: process.execPath, args: ['-e', BAD_THEN_GOOD], env: {} }, () => {});
    const client = new Client({ name: 'test', version: '1' }, { versionNegotiation: { mode: 'legacy' } });
    const errors: string[] = [];
    client.onerror = (error) => errors.push(error.message);
    try {
      await client.connect(transport);
      const result = await client.request({ method: 'tools/call', params: { name: 'any', arguments: {} } }, callResultSchema('legacy'), { timeout: 10_000 });
      expect(result.content).toEqual([{ type: 'text', text: 'fine' }]);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatch(/Unknown message type/);
    } finally {
      await client.close();
    }
  }, 15_000);
});
