// SDK v2 encodes -32002 as -32602 in both eras; the legacy wire keeps -32002 for an unknown resource, on
// resources/read answers only (src/mcp/server/legacy-error-codes.ts).
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { LegacyResourceErrors } from '../../../../src/mcp/server/legacy-error-codes.js';

function fakeTransport(): Transport & { sent: JSONRPCMessage[] } {
  const sent: JSONRPCMessage[] = [];
  return {
    sent,
    start: async () => undefined,
    close: async () => undefined,
    send: async (message) => {
      sent.push(message);
    },
  };
}

const request = (id: number, method: string): JSONRPCMessage => ({ jsonrpc: '2.0', id, method, params: {} });
const invalidParams = (id: number): JSONRPCMessage => ({ jsonrpc: '2.0', id, error: { code: -32602, message: 'unknown resource: x' } });

describe('LegacyResourceErrors', () => {
  it('answers -32002 for a resources/read the SDK answered -32602, and leaves every other answer alone', async () => {
    const inner = fakeTransport();
    const wrapper = new LegacyResourceErrors(inner);
    const received: JSONRPCMessage[] = [];
    wrapper.onmessage = (message) => received.push(message);
    await wrapper.start();
    inner.onmessage?.(request(1, 'resources/read'));
    inner.onmessage?.(request(2, 'prompts/get'));
    expect(received).toHaveLength(2);
    await wrapper.send(invalidParams(1));
    await wrapper.send(invalidParams(2));
    // An id answered once is forgotten: a second answer of it is not rewritten.
    await wrapper.send(invalidParams(1));
    expect(inner.sent.map((message) => ('error' in message ? message.error.code : null))).toEqual([-32002, -32602, -32602]);
  });

  it('keeps a read answered with a result from rewriting a later answer of the same id', async () => {
    const inner = fakeTransport();
    const wrapper = new LegacyResourceErrors(inner);
    await wrapper.start();
    inner.onmessage?.(request(7, 'resources/read'));
    await wrapper.send({ jsonrpc: '2.0', id: 7, result: { contents: [] } });
    await wrapper.send(invalidParams(7));
    expect(inner.sent.map((message) => ('error' in message ? message.error.code : 'result'))).toEqual(['result', -32602]);
  });
});
