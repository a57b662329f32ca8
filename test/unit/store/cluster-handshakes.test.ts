// A Cluster command waits for its node's handshake, and only for its node's (src/store/cluster-handshakes.ts).
import { EventEmitter } from 'node:events';
import type { Cluster, Redis } from 'ioredis';
import clusterKeySlot from 'cluster-key-slot';
import { describe, expect, it } from 'vitest';
import { trackClusterHandshakes } from '../../../src/store/cluster-handshakes.js';

/** Stands in for ioredis' Cluster and node clients: their public events, `status`, `options` and `slots`. */
class FakeNode extends EventEmitter {
  constructor(
    public status: string,
    public options: { host: string; port: number },
  ) {
    super();
  }
  settle(event: 'ready' | 'end'): void {
    this.status = event;
    this.emit(event);
  }
}

function fakeCluster(): { cluster: Cluster; emitter: EventEmitter & { slots: string[][] }; open(port: number, status?: string): FakeNode } {
  const emitter = Object.assign(new EventEmitter(), { slots: [] as string[][] });
  return {
    cluster: emitter as unknown as Cluster,
    emitter,
    open(port, status = 'connecting') {
      const node = new FakeNode(status, { host: '127.0.0.1', port });
      emitter.emit('+node', node as unknown as Redis);
      return node;
    },
  };
}

const state = async (promise: Promise<void> | undefined): Promise<'none' | 'settled' | 'waiting'> => {
  if (promise === undefined) return 'none';
  return Promise.race([promise.then(() => 'settled' as const), new Promise<'waiting'>((resolve) => setTimeout(() => resolve('waiting'), 20))]);
};

describe('Cluster node handshakes', () => {
  it('makes a key wait for its own node until that node is ready, and leaves keys of other nodes alone', async () => {
    const { cluster, emitter, open } = fakeCluster();
    const handshakes = trackClusterHandshakes(cluster);
    emitter.slots[clusterKeySlot('a')] = ['127.0.0.1:7001', '127.0.0.1:7004'];
    emitter.slots[clusterKeySlot('b')] = ['127.0.0.1:7002'];
    const a = open(7001);
    open(7002, 'ready');

    const waiting = handshakes.forKey('a', 5_000);
    expect(await state(waiting)).toBe('waiting');
    expect(await state(handshakes.forKey('b', 5_000))).toBe('none');
    a.settle('ready');
    expect(await state(waiting)).toBe('settled');
    expect(handshakes.forKey('a', 5_000)).toBeUndefined();
  });

  it('lets a command go once its node gives up (the command then fails as an outage), or after the bound', async () => {
    const { cluster, emitter, open } = fakeCluster();
    const handshakes = trackClusterHandshakes(cluster);
    emitter.slots[clusterKeySlot('a')] = ['127.0.0.1:7001'];
    const dead = open(7001, 'connect');
    const waiting = handshakes.forKey('a', 5_000);
    dead.settle('end');
    expect(await state(waiting)).toBe('settled');

    open(7001);
    const started = Date.now();
    await handshakes.forKey('a', 50);
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
  });

  it('makes an operation on every master wait for every node being set up', async () => {
    const { cluster, open } = fakeCluster();
    const handshakes = trackClusterHandshakes(cluster);
    expect(handshakes.forAll(5_000)).toBeUndefined();
    const first = open(7001);
    const second = open(7002, 'connect');
    const waiting = handshakes.forAll(5_000);
    first.settle('ready');
    expect(await state(waiting)).toBe('waiting');
    second.settle('ready');
    expect(await state(waiting)).toBe('settled');
    expect(handshakes.forAll(5_000)).toBeUndefined();
  });

  it('keeps tracking the newer connection when a node is opened again before the old one ended', async () => {
    const { cluster, emitter, open } = fakeCluster();
    const handshakes = trackClusterHandshakes(cluster);
    emitter.slots[clusterKeySlot('a')] = ['127.0.0.1:7001'];
    const old = open(7001);
    const fresh = open(7001);
    old.settle('end');
    expect(await state(handshakes.forKey('a', 5_000))).toBe('waiting');
    fresh.settle('ready');
    expect(handshakes.forKey('a', 5_000)).toBeUndefined();
  });
});
