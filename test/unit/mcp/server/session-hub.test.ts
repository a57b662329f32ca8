import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { createSessionHub, SESSION_CHANNEL } from '../../../../src/mcp/server/session-hub.js';
import type { SseStream } from '../../../../src/mcp/server/sse-stream.js';
import type { MessageBus } from '../../../../src/store/bus.js';
import type { Principal } from '../../../../src/call/principal.js';

/** A bus that holds published messages until the test delivers them, to every subscriber in one order (as Redis does). */
function heldBus(): MessageBus & { deliver(): void } {
  const handlers: Array<(message: string) => void> = [];
  const held: string[] = [];
  return {
    async publish(channel, message) {
      if (channel === SESSION_CHANNEL) held.push(message);
    },
    subscribe(_channel, handler) {
      handlers.push(handler);
      return () => undefined;
    },
    async close() {},
    deliver() {
      for (const message of held.splice(0)) for (const handler of handlers) handler(message);
    },
  };
}

const fakeStream = (): SseStream => {
  let closed = false;
  return { start: () => undefined, send: () => !closed, ping: () => !closed, close: () => void (closed = true), get closed() { return closed; } };
};

const alice: Principal = { tenant: 'acme', user: 'alice', roles: [], claims: {} };
const open = (stream: SseStream) => ({ principal: alice, mode: 'default' as const, toolset: undefined, stream, fingerprint: 'f' });

describe('the session hub', () => {
  it('keeps only the newest stream of a session, on one replica or across two that attached at the same time', () => {
    const bus = heldBus();
    const hubs = [0, 1].map(() => createSessionHub({ bus, log: pino({ level: 'silent' }), fingerprint: async () => 'f' }));
    const [a, b] = hubs as [ReturnType<typeof createSessionHub>, ReturnType<typeof createSessionHub>];
    // On one replica the older stream closes at once.
    const first = fakeStream();
    const second = fakeStream();
    void a.attach('s1', open(first));
    void a.attach('s1', open(second));
    expect([first.closed, second.closed]).toEqual([true, false]);
    // Two replicas attach before either hears the other: the bus' order decides, and exactly one stays.
    const onA = fakeStream();
    const onB = fakeStream();
    void a.attach('s2', open(onA));
    void b.attach('s2', open(onB));
    bus.deliver();
    expect([onA.closed, onB.closed]).toEqual([true, false]);
    expect(second.closed).toBe(false);
    // A later reconnect on A replaces B's.
    const again = fakeStream();
    void a.attach('s2', open(again));
    bus.deliver();
    expect([onB.closed, again.closed]).toEqual([true, false]);
    for (const hub of hubs) hub.close();
  });

  it('resolves attach only once the bus has taken the announcement, so the client sees its 200 after it', async () => {
    let acknowledge!: () => void;
    const bus: MessageBus = {
      publish: () => new Promise<void>((resolve) => (acknowledge = resolve)),
      subscribe: () => () => undefined,
      async close() {},
    };
    const hub = createSessionHub({ bus, log: pino({ level: 'silent' }), fingerprint: async () => 'f' });
    let attached = false;
    const attaching = hub.attach('s1', open(fakeStream())).then(() => (attached = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(attached).toBe(false);
    acknowledge();
    await attaching;
    expect(attached).toBe(true);
    hub.close();
  });
});

describe('cancellations across replicas', () => {
  it('aborts the calls running here at once, and sends the rest to other replicas in one bus message per request', () => {
    const bus = heldBus();
    const published: string[] = [];
    const counting: MessageBus = { ...bus, publish: async (channel, message) => void (published.push(message), await bus.publish(channel, message)) };
    const [a, b] = [0, 1].map(() => createSessionHub({ bus: counting, log: pino({ level: 'silent' }), fingerprint: async () => 'f' })) as [ReturnType<typeof createSessionHub>, ReturnType<typeof createSessionHub>];
    const here = a.trackCall('s1', 1);
    const there = b.trackCall('s1', 'two');
    const otherSession = b.trackCall('s2', 'two');
    a.cancel('s1', [1, 'two', 3, 4, 'two']);
    expect(here.signal.aborted).toBe(true);
    expect(published).toHaveLength(1);
    expect(JSON.parse(published[0]!)).toEqual({ t: 'cancel', session: 's1', requests: ['"two"', '3', '4'] });
    bus.deliver();
    expect(there.signal.aborted).toBe(true);
    expect(otherSession.signal.aborted).toBe(false);
    // Only calls running here: nothing crosses the bus.
    const local = a.trackCall('s1', 5);
    a.cancel('s1', [5]);
    expect(local.signal.aborted).toBe(true);
    expect(published).toHaveLength(1);
    // A replica of the older version names one request per message.
    const old = b.trackCall('s3', 7);
    void bus.publish(SESSION_CHANNEL, JSON.stringify({ t: 'cancel', session: 's3', request: '7' }));
    bus.deliver();
    expect(old.signal.aborted).toBe(true);
    a.close();
    b.close();
  });
});
