import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createRelayRequests } from '../../../../src/mcp/server/relay-responses.js';
import { createMemoryBus, type MessageBus } from '../../../../src/store/bus.js';

describe("a session's answers to relayed requests", () => {
  it('crosses the bus in one message per POST, drops answers to ids toolgate never made, and still reaches the call waiting on another replica', async () => {
    const bus = createMemoryBus();
    const published: string[] = [];
    const counting: MessageBus = { ...bus, publish: async (channel, message) => void (published.push(message), await bus.publish(channel, message)) };
    const asking = createRelayRequests(bus, pino({ level: 'silent' }));
    const receiving = createRelayRequests(counting, pino({ level: 'silent' }));
    let asked = '';
    const answer = asking.ask('s1', async (message) => void (asked = String(message.id)), { method: 'elicitation/create', params: {} }, new AbortController().signal, 5000);
    await Promise.resolve();
    const foreign = Array.from({ length: 50 }, (_, i) => ({ jsonrpc: '2.0', id: i, result: {} }));
    expect(receiving.answers('s1', foreign)).toBe(true);
    expect(published).toHaveLength(0);
    const lookalike = { jsonrpc: '2.0', id: `relay-${'A'.repeat(22)}`, result: {} };
    expect(receiving.answers('s1', [...foreign, lookalike, { jsonrpc: '2.0', id: asked, result: { action: 'accept' } }])).toBe(true);
    expect(published).toHaveLength(1);
    expect(await answer).toEqual({ action: 'accept' });
    asking.close();
    receiving.close();
  });
});
