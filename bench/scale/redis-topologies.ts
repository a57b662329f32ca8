// The Redis topologies of `npm run test:redis-topologies`, from Debian's redis-server, redis-cli and
// redis-sentinel on free loopback ports: a 6-node Cluster (3 masters, 3 replicas), a master + replica
// watched by 3 Sentinels, and a TLS listener with certificates made here (openssl). Every process is
// tracked by processes.ts, so killAll() ends them however the run ends.
import { execFile, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { exited, freePort, start, waitFor } from './processes.js';

const run = promisify(execFile);

/** One redis-server (or sentinel) process on a loopback port of its own. */
export class RedisNode {
  private child: ChildProcess | undefined;
  constructor(
    private readonly binary: string,
    readonly port: number,
    private readonly dir: string,
    private readonly args: string[],
  ) {
    mkdirSync(dir, { recursive: true });
  }

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  start(): void {
    this.child = start(this.binary, this.args, join(this.dir, 'redis.log'));
  }

  /** SIGKILL: the process is gone at once, as in a crash (DEBUG SEGFAULT is off in Debian's build). */
  async kill(): Promise<void> {
    if (!this.child) return;
    this.child.kill('SIGKILL');
    await exited(this.child, 5_000);
    this.child = undefined;
  }
}

/** `redis-cli -p port args…`, bounded; its trimmed output. */
export async function cli(port: number, args: string[], extra: string[] = []): Promise<string> {
  const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...extra, ...args], { timeout: 5_000 });
  return stdout.trim();
}

const common = (dir: string): string[] => ['--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--loglevel', 'warning'];

export interface TestCluster {
  nodes: RedisNode[];
  /** Seed URLs for `store.cluster.nodes`. */
  urls: string[];
  /** Which node serves as master, by port (from CLUSTER NODES, asked of `askPort`). */
  masters(askPort?: number): Promise<Array<{ port: number; slots: string }>>;
}

/** Six cluster-enabled nodes joined by `redis-cli --cluster create … --cluster-replicas 1`: 3 masters, 3 replicas. */
export async function startCluster(binary: string, dir: string): Promise<TestCluster> {
  const nodes: RedisNode[] = [];
  for (let i = 0; i < 6; i += 1) {
    const port = await freePort();
    const nodeDir = join(dir, `cluster-${port}`);
    // A node timeout of 1 s: a dead master is failed over within a few seconds.
    nodes.push(new RedisNode(binary, port, nodeDir, ['--port', String(port), ...common(nodeDir), '--cluster-enabled', 'yes', '--cluster-config-file', join(nodeDir, 'nodes.conf'), '--cluster-node-timeout', '1000']));
  }
  for (const node of nodes) node.start();
  for (const node of nodes) await waitFor(`cluster node ${node.port} answers`, async () => (await cli(node.port, ['ping'])) === 'PONG', 10_000);
  await run('redis-cli', ['--cluster', 'create', ...nodes.map((n) => n.address), '--cluster-replicas', '1', '--cluster-yes'], { timeout: 30_000 });
  for (const node of nodes) await waitFor(`cluster state ok on ${node.port}`, async () => (await cli(node.port, ['cluster', 'info'])).includes('cluster_state:ok'), 20_000);
  const masters = async (askPort = nodes[0]!.port): Promise<Array<{ port: number; slots: string }>> =>
    (await cli(askPort, ['cluster', 'nodes']))
      .split('\n')
      .map((line) => line.split(' '))
      .filter((f) => f[2]?.includes('master') && !f[2].includes('fail') && f.length > 8)
      .map((f) => ({ port: Number(f[1]!.split('@')[0]!.split(':')[1]), slots: f.slice(8).join(' ') }));
  return { nodes, urls: nodes.map((n) => `redis://${n.address}`), masters };
}

export interface TestSentinels {
  master: RedisNode;
  replica: RedisNode;
  sentinels: RedisNode[];
  name: string;
  /** The port the Sentinels name as master now. */
  currentMasterPort(): Promise<number>;
}

/**
 * A master, its replica and three Sentinels (quorum 2, a master is down after 1 s without an answer).
 * Without a `redis-sentinel` binary, `redis-server <conf> --sentinel` is the same program.
 */
export async function startSentinels(binary: string, sentinelBinary: string | undefined, dir: string): Promise<TestSentinels> {
  const name = 'toolgate';
  const masterPort = await freePort();
  const replicaPort = await freePort();
  const master = new RedisNode(binary, masterPort, join(dir, `master-${masterPort}`), ['--port', String(masterPort), ...common(join(dir, `master-${masterPort}`))]);
  const replica = new RedisNode(binary, replicaPort, join(dir, `replica-${replicaPort}`), ['--port', String(replicaPort), ...common(join(dir, `replica-${replicaPort}`)), '--replicaof', '127.0.0.1', String(masterPort)]);
  master.start();
  replica.start();
  await waitFor('the replica is in sync', async () => (await cli(replicaPort, ['info', 'replication'])).includes('master_link_status:up'), 15_000);
  const sentinels: RedisNode[] = [];
  for (let i = 0; i < 3; i += 1) {
    const port = await freePort();
    const sentinelDir = join(dir, `sentinel-${port}`);
    mkdirSync(sentinelDir, { recursive: true });
    const conf = join(sentinelDir, 'sentinel.conf');
    writeFileSync(conf, [
      `port ${port}`,
      'bind 127.0.0.1',
      `dir ${sentinelDir}`,
      `sentinel monitor ${name} 127.0.0.1 ${masterPort} 2`,
      `sentinel down-after-milliseconds ${name} 1000`,
      `sentinel failover-timeout ${name} 5000`,
      `sentinel parallel-syncs ${name} 1`,
      '',
    ].join('\n'));
    sentinels.push(new RedisNode(sentinelBinary ?? binary, port, sentinelDir, sentinelBinary ? [conf] : [conf, '--sentinel']));
  }
  for (const sentinel of sentinels) sentinel.start();
  for (const sentinel of sentinels) {
    await waitFor(`sentinel ${sentinel.port} sees the replica and the other sentinels`, async () => {
      const info = await cli(sentinel.port, ['sentinel', 'master', name]);
      const field = (key: string): number => Number(info.split('\n')[info.split('\n').indexOf(key) + 1]);
      return field('num-slaves') >= 1 && field('num-other-sentinels') >= 2;
    }, 20_000);
  }
  const currentMasterPort = async (): Promise<number> => Number((await cli(sentinels[0]!.port, ['sentinel', 'get-master-addr-by-name', name])).split('\n')[1]);
  return { master, replica, sentinels, name, currentMasterPort };
}

export interface TestCertificates {
  /** The CA that signed the server's certificate. */
  ca: string;
  /** A CA that signed nothing the server presents. */
  otherCa: string;
  serverCert: string;
  serverKey: string;
}

/** A CA, a server certificate it signs (for 127.0.0.1 and localhost), and an unrelated CA. */
export async function makeCertificates(dir: string): Promise<TestCertificates> {
  mkdirSync(dir, { recursive: true });
  const file = (name: string): string => join(dir, name);
  const openssl = (args: string[]): Promise<unknown> => run('openssl', args, { timeout: 30_000 });
  for (const ca of ['ca', 'other-ca']) {
    await openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', file(`${ca}.key`), '-out', file(`${ca}.pem`), '-days', '1', '-subj', `/CN=toolgate test ${ca}`]);
  }
  await openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', file('server.key'), '-out', file('server.csr'), '-subj', '/CN=localhost']);
  writeFileSync(file('san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  await openssl(['x509', '-req', '-in', file('server.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial', '-out', file('server.pem'), '-days', '1', '-extfile', file('san.ext')]);
  return { ca: file('ca.pem'), otherCa: file('other-ca.pem'), serverCert: file('server.pem'), serverKey: file('server.key') };
}

/** A Redis that speaks only TLS (no plain port); clients need no certificate of their own. */
export async function startTlsRedis(binary: string, dir: string, certs: TestCertificates): Promise<RedisNode> {
  const port = await freePort();
  const nodeDir = join(dir, `tls-${port}`);
  const node = new RedisNode(binary, port, nodeDir, [
    '--port', '0', '--tls-port', String(port), ...common(nodeDir),
    '--tls-cert-file', certs.serverCert, '--tls-key-file', certs.serverKey, '--tls-ca-cert-file', certs.ca, '--tls-auth-clients', 'no',
  ]);
  node.start();
  await waitFor('the TLS Redis answers', async () => (await cli(port, ['ping'], ['--tls', '--cacert', certs.ca])) === 'PONG', 10_000);
  return node;
}
