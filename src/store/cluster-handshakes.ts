import type { Cluster, Redis } from 'ioredis';
import clusterKeySlot from 'cluster-key-slot';
import { bounded } from './bounded.js';

/** Waits for Cluster node connections that are still being set up; see `trackClusterHandshakes`. */
export interface ClusterHandshakes {
  /** Settles once the node serving `key` has connected (or given up), at most `maxMs`; undefined when there is nothing to wait for. */
  forKey(key: string, maxMs: number): Promise<void> | undefined;
  /** The same for every node being set up (an operation that touches every master, such as a scan). */
  forAll(maxMs: number): Promise<void> | undefined;
}

/**
 * With the offline queue off, ioredis fails a command at once ("Connection is closed.") when the
 * connection to its node is still in its handshake, even once the Cluster is ready: a new client's first
 * commands race the handshakes of the nodes it has just opened, and a node that joins later (a resharding,
 * a replica that restarts) has the same few milliseconds. A command bound for such a node waits for that
 * node alone; commands for the other nodes never wait, and a node that cannot be reached still fails its
 * commands once its connection ends (a node connection is not retried: ioredis re-reads the slots).
 */
export function trackClusterHandshakes(cluster: Cluster): ClusterHandshakes {
  const opening = new Map<string, Promise<void>>();

  cluster.on('+node', (node: Redis) => {
    if (node.status !== 'connecting' && node.status !== 'connect') return;
    const key = `${node.options.host}:${node.options.port}`;
    const settled = new Promise<void>((resolve) => {
      const done = (): void => {
        node.off('ready', done);
        node.off('end', done);
        if (opening.get(key) === settled) opening.delete(key);
        resolve();
      };
      node.on('ready', done);
      node.on('end', done);
    });
    opening.set(key, settled);
  });

  return {
    forKey(key, maxMs) {
      if (opening.size === 0) return undefined;
      // The slot's first node is its master, where ioredis sends every command (reads included).
      const node = cluster.slots[clusterKeySlot(key)]?.[0];
      const settled = node === undefined ? undefined : opening.get(node);
      return settled && bounded(settled, maxMs, () => undefined);
    },
    forAll(maxMs) {
      return opening.size === 0 ? undefined : bounded(Promise.all(opening.values()).then(() => undefined), maxMs, () => undefined);
    },
  };
}
