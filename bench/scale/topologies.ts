// npm run test:redis-topologies — toolgate on the Redis that platforms run: a 6-node Cluster, a master
// watched by 3 Sentinels, and a TLS-only Redis, all started here on free loopback ports (about two
// minutes). Two gateway processes share each topology. Prints a table of what it saw, writes it to
// bench/redis-topologies-results.md, and exits 1 when a must-show does not hold.
//
// Needs redis-server, redis-cli, redis-sentinel and openssl (Debian: apt-get install -y redis-server
// redis-sentinel openssl); installs nothing, and runs `dist/` (build first; the npm script does).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import clusterKeySlot from 'cluster-key-slot';
import { SignJWT } from 'jose';
import { stringify } from 'yaml';
import { findExecutable } from '../../src/builtins/sandbox.js';
import type { RedisTopology } from '../../src/store/redis-client.js';
import { createRedisClient } from '../../src/store/redis-client.js';
import { createMcpSessions } from '../../src/mcp/server/sessions.js';
import { createRedisBus } from '../../src/store/redis-bus.js';
import { createRedisStore } from '../../src/store/redis.js';
import { startMcpUpstream, textTool } from '../../test/helpers/mcp-upstream.js';
import { call, freePort, killAll, Replica, waitFor } from './processes.js';
import { cli, makeCertificates, startCluster, startSentinels, startTlsRedis, type TestCluster } from './redis-topologies.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const serverJs = join(root, 'dist/src/server.js');
const JWT_SECRET = randomBytes(32).toString('hex');
const RUN_BOUND_MS = 5 * 60_000;
const RATE_LIMIT = 100;
const RATE_LIMIT_CALLS = 300;
const TENANTS = Array.from({ length: 12 }, (_, i) => `t${i}`);
const LOAD_WORKERS = 16;
const STORE_DOWN = /state store is unavailable/;

interface Row {
  topology: string;
  check: string;
  result: string;
  ok: boolean;
}
const rows: Row[] = [];
const note = (topology: string, check: string, ok: boolean, result: string): void => void rows.push({ topology, check, ok, result });

function sign(sub: string, tenant: string, roles: string[] = []): Promise<string> {
  return new SignJWT({ tenant, roles }).setProtectedHeader({ alg: 'HS256' }).setSubject(sub).setIssuer('toolgate-topologies').setAudience('toolgate').setIssuedAt().setExpirationTime('1h').sign(new TextEncoder().encode(JWT_SECRET));
}

function configFor(store: RedisTopology, prefix: string, metricsPort: number): Record<string, unknown> {
  const limit = (n: number, windowMs: number) => ({ 'rate-limit': { limit: n, windowMs, per: 'user', tools: ['limited'] } });
  return {
    server: { host: '127.0.0.1', port: 8080, maxConnectionsPerAddress: 0 },
    auth: { jwt: { secret: JWT_SECRET, issuer: 'toolgate-topologies', audience: 'toolgate' } },
    store: { kind: 'redis', ...store, prefix, commandTimeoutMs: 500 },
    audit: { sink: 'off' },
    egress: { allow: ['127.0.0.1'] },
    metrics: { host: '127.0.0.1', port: metricsPort },
    functions: [{ module: join(here, 'scale-tools.mjs') }],
    tenants: {
      // The load: a limit it never reaches (every call is one store round trip), and approvals.
      // Approvals expire after 5 s and the pending bounds are the schema's highest, so the load's tickets keep
      // parking (202) rather than meet the pending bounds this test is not about.
      scale: { policies: { ...limit(100_000, 1000), approval: { tools: ['ticket'], expiresMs: 5000, maxPendingPerUser: 10_000, maxPendingPerTenant: 10_000 } } },
      // Exactness: RATE_LIMIT calls per user per 2 minutes.
      rl: { policies: limit(RATE_LIMIT, 120_000) },
      // Counted once: one user whose window is read back from Redis after a failover.
      exact: { policies: limit(100_000, 300_000) },
      ...Object.fromEntries(TENANTS.map((t) => [t, { policies: limit(1000, 120_000) }])),
    },
    logging: { level: 'warn' },
  };
}

async function startGateways(label: string, store: RedisTopology, prefix: string, dir: string, count = 2): Promise<Replica[]> {
  const gateways: Replica[] = [];
  for (let i = 1; i <= count; i += 1) {
    const metricsPort = await freePort();
    const configFile = join(dir, `${label}-g${i}.yaml`);
    writeFileSync(configFile, stringify(configFor(store, prefix, metricsPort)));
    gateways.push(new Replica({ name: `${label}-g${i}`, port: await freePort(), metricsPort, configFile }, serverJs, dir));
  }
  // A minute: the machine may be busy, and start-up is not what this run measures.
  await Promise.all(gateways.map((g) => g.start(60_000)));
  return gateways;
}

async function storeUnavailableTotal(gateway: Replica): Promise<number> {
  const text = await gateway.metrics().catch(() => '');
  return [...text.matchAll(/^toolgate_store_unavailable_total\{[^}]*\} (\S+)$/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
}

async function storeUp(gateway: Replica): Promise<number | undefined> {
  const text = await gateway.metrics().catch(() => '');
  const value = /^toolgate_store_up (\S+)$/m.exec(text)?.[1];
  return value === undefined ? undefined : Number(value);
}

// ---- Shared state across two gateways on one topology ----

async function sharedState(topology: string, [g1, g2]: Replica[]): Promise<void> {
  if (!g1 || !g2) throw new Error('two gateways needed');
  // Exact rate limit: RATE_LIMIT_CALLS calls by one user, alternating gateways, 24 at a time.
  {
    const token = await sign('rl-user', 'rl');
    const statuses: number[] = [];
    let next = 0;
    await Promise.all(Array.from({ length: 24 }, async () => {
      while (next < RATE_LIMIT_CALLS) {
        const i = next++;
        statuses.push((await call((i % 2 === 0 ? g1 : g2).url, token, 'POST', '/v1/execute', { name: 'limited', arguments: {} })).status);
      }
    }));
    const admitted = statuses.filter((s) => s === 200).length;
    const refused = statuses.filter((s) => s === 429).length;
    note(topology, `rate limit ${RATE_LIMIT}/user: ${RATE_LIMIT_CALLS} calls over both gateways`, admitted === RATE_LIMIT && admitted + refused === RATE_LIMIT_CALLS, `admitted ${admitted} (${admitted === RATE_LIMIT ? 'exact' : 'NOT exact'}), refused ${refused}, other ${RATE_LIMIT_CALLS - admitted - refused}`);
  }
  // Approval created through g1, decided through g2, read through g1.
  {
    const requester = await sign('requester', 'scale');
    const approver = await sign('approver', 'scale', ['approver']);
    const created = await call(g1.url, requester, 'POST', '/v1/execute', { name: 'ticket', arguments: { text: topology } });
    const id = String(created.json.approvalId ?? '');
    const approved = await call(g2.url, approver, 'POST', `/v1/approvals/${id}/approve`, {});
    const read = await call(g1.url, requester, 'GET', `/v1/approvals/${id}`);
    const ok = created.status === 202 && approved.status === 200 && read.json.status === 'approved';
    note(topology, 'approval created on g1, approved on g2', ok, ok ? 'g1 reads it approved' : `NO (${created.status}/${approved.status}/${read.status})`);
  }
  // A user's MCP registration and a runtime key, made on g1, used on g2 at once.
  const upstream = await startMcpUpstream([textTool('note', (args) => `noted: ${String(args.text ?? '')}`)]);
  try {
    const user = await sign('mcp-user', 'scale');
    const put = await call(g1.url, user, 'PUT', '/v1/users/mcp-user/mcp-servers/notes', { url: upstream.url, transport: 'streamable-http' });
    const used = await call(g2.url, user, 'POST', '/v1/execute', { name: 'user_mcp-user_tool_note', arguments: { text: 'from g2' } });
    const ok = (put.status === 200 || put.status === 201) && used.status === 200 && used.json.ok === true;
    note(topology, 'user MCP registration on g1, its tool called on g2 at once', ok, ok ? `g2 answers "${String(used.json.output)}"` : `NO (${put.status}/${used.status})`);
  } finally {
    await upstream.close();
  }
  {
    const admin = await sign('admin', 'scale', ['admin']);
    const created = await call(g1.url, admin, 'POST', '/v1/admin/keys', { user: 'key-user' });
    const key = String(created.json.key ?? '');
    const used = await call(g2.url, key, 'GET', '/v1/tools');
    const ok = created.status === 201 && used.status === 200;
    note(topology, 'runtime API key created on g1, used on g2 at once', ok, ok ? 'g2 accepts it' : `NO (${created.status}/${used.status})`);
  }
}

// ---- Where one tenant's keys land on the Cluster ----

async function slotDistribution(cluster: TestCluster, [g1, g2]: Replica[], prefix: string): Promise<void> {
  // 12 tenants × 8 users: one rate-limit window each, alternating gateways.
  await Promise.all(TENANTS.map(async (tenant) => {
    for (let u = 0; u < 8; u += 1) await call((u % 2 === 0 ? g1 : g2)!.url, await sign(`u${u}`, tenant), 'POST', '/v1/execute', { name: 'limited', arguments: {} });
  }));
  const masters = await cluster.masters();
  const ranges = masters.map((m) => ({ port: m.port, ranges: m.slots.split(' ').map((r) => r.split('-').map(Number) as [number, number?]) }));
  const masterOf = (key: string): number => {
    const slot = clusterKeySlot(key);
    return ranges.find((m) => m.ranges.some(([lo, hi]) => slot >= lo && slot <= (hi ?? lo)))?.port ?? -1;
  };
  const perTenant = TENANTS.map((tenant) => {
    const keys = Array.from({ length: 8 }, (_, u) => `${prefix}ratelimit:120000:1000:t=${tenant}|u=u${u}`);
    return { tenant, masters: new Set(keys.map(masterOf)).size };
  });
  const perMaster = new Map<number, number>();
  for (const m of masters) perMaster.set(m.port, 0);
  let stored = 0;
  for (const m of masters) {
    const count = (await cli(m.port, ['--scan', '--pattern', `${prefix}*`])).split('\n').filter(Boolean).length;
    perMaster.set(m.port, count);
    stored += count;
  }
  const spread = perTenant.filter((t) => t.masters > 1).length;
  note(
    'cluster',
    `slot distribution: ${TENANTS.length} tenants × 8 users' rate-limit windows`,
    spread === TENANTS.length && [...perMaster.values()].every((n) => n > 0),
    `keys per master ${[...perMaster].map(([port, n]) => `:${port} ${n}`).join(', ')} (${stored} in all); masters per tenant ${perTenant.map((t) => `${t.tenant} ${t.masters}`).join(', ')}`,
  );
}

// ---- The multi-key scripts and the scan, straight through the store on the Cluster ----

async function clusterScripts(store: RedisTopology, prefix: string): Promise<void> {
  const client = createRedisStore({ ...store, prefix, commandTimeoutMs: 2_000 });
  try {
    await client.verifyConnection?.();
    const sessions = createMcpSessions(client);
    const limits = { idleTimeoutMs: 60_000, maxPerPrincipal: 2, maxPerTenant: 10 };
    const who = { tenant: 'scale', user: 'session-user', roles: [], claims: {} };
    const first = await sessions.create(who, undefined, limits);
    await sessions.create(who, undefined, limits);
    const third = await sessions.create(who, undefined, limits);
    const resumed = await sessions.resume(who, third.id, undefined, limits);
    const firstGone = !(await sessions.resume(who, first.id, undefined, limits));
    const ended = await sessions.end(who, third.id, undefined);
    const approvals = await client.scan('approval:scale:');
    const ok = third.ended.includes(first.id) && resumed && firstGone && ended && approvals.length > 0;
    note('cluster', 'session lease scripts (acquire with an eviction, renew, release) and a scan, on the Cluster', ok, `evicted the oldest: ${third.ended.includes(first.id)}; renewed: ${resumed}; released: ${ended}; scan over every master found ${approvals.length} approvals of tenant scale`);
  } finally {
    await client.close();
  }
}

// ---- A new client's first commands, while its node connections are still being set up ----

async function freshClients(store: RedisTopology, prefix: string): Promise<void> {
  // ioredis reports the Cluster ready before every node connection is; without the offline queue a command
  // for a node still in its handshake failed at once (about 1 new client in 30 here before the store waited).
  const clients = 100;
  const failures: string[] = [];
  for (let i = 0; i < clients; i += 1) {
    const client = createRedisStore({ ...store, prefix, commandTimeoutMs: 2_000 });
    try {
      await client.verifyConnection?.();
      await Promise.all(['a', 'b', 'c'].map((user) => client.hitWindow(`fresh:${i}:${user}`, 10, 60_000)));
    } catch (error) {
      failures.push((error as Error).message);
    } finally {
      await client.close();
    }
  }
  note('cluster', `a new client's first commands, right after it connected (${clients} clients, 3 rate-limit scripts each)`, failures.length === 0, `failed ${failures.length} of ${clients}${failures[0] ? `: ${failures[0]}` : ''}`);
}

// ---- Failover under steady load ----

interface Sample {
  at: number;
  outcome: 'ok' | 'fail-closed' | 'error' | 'unanswered';
  detail: string;
}

/** LOAD_WORKERS workers over both gateways until stopped: rate-limited calls (a store script each), approvals, plain calls. */
function steadyLoad(gateways: Replica[], tokens: string[], exactToken: string): { samples: Sample[]; exact: { admitted: number; failedClosed: number }; stop(): Promise<void> } {
  const samples: Sample[] = [];
  const exact = { admitted: 0, failedClosed: 0 };
  let running = true;
  const deadline = Date.now() + 90_000;
  const worker = async (w: number): Promise<void> => {
    for (let i = 0; running && Date.now() < deadline; i += 1) {
      const gateway = gateways[(w + i) % gateways.length]!;
      const isExact = w === 0;
      const pick = i % 4;
      const body = isExact || pick < 2 ? { name: 'limited', arguments: {} } : pick === 2 ? { name: 'ticket', arguments: { text: 'x' } } : { name: 'say', arguments: { text: 'x' } };
      try {
        const { status, json } = await call(gateway.url, isExact ? exactToken : tokens[w]!, 'POST', '/v1/execute', body);
        const message = JSON.stringify(json);
        const failedClosed = STORE_DOWN.test(message);
        const outcome: Sample['outcome'] = failedClosed ? 'fail-closed' : status === 200 || status === 202 ? 'ok' : 'error';
        const code = (json.error as { errorType?: string } | undefined)?.errorType ?? (json.code as string | undefined) ?? '';
        samples.push({ at: Date.now(), outcome, detail: `${body.name} ${status}${code ? ` ${code}` : ''}` });
        if (isExact && status === 200) exact.admitted += 1;
        if (isExact && failedClosed) exact.failedClosed += 1;
      } catch (error) {
        samples.push({ at: Date.now(), outcome: 'unanswered', detail: `${body.name} ${(error as Error).name}` });
      }
    }
  };
  const done = Promise.all(Array.from({ length: LOAD_WORKERS }, (_, w) => worker(w)));
  return {
    samples,
    exact,
    async stop() {
      running = false;
      await done;
    },
  };
}

const tally = (samples: Sample[]): string => {
  const counts = new Map<string, number>();
  for (const s of samples) counts.set(s.detail, (counts.get(s.detail) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} ×${n}`).join(', ');
};

async function failover(topology: 'cluster' | 'sentinel', gateways: Replica[], store: RedisTopology, prefix: string, kill: () => Promise<void>, promoted: () => Promise<boolean>): Promise<void> {
  const tokens = await Promise.all(Array.from({ length: LOAD_WORKERS }, (_, i) => sign(`load-${topology}-${i}`, 'scale')));
  const exactUser = `exact-${topology}`;
  const load = steadyLoad(gateways, tokens, await sign(exactUser, 'exact'));
  // The bus: a message published by one connection reaches another, before and after the failover.
  const busA = createRedisBus({ ...store, prefix });
  const busB = createRedisBus({ ...store, prefix });
  const received: string[] = [];
  busB.subscribe('failover-probe', (message) => received.push(message));
  let publishErrors = 0;
  let lastPublishError = '';
  const delivered = async (text: string, timeoutMs: number): Promise<number | undefined> => {
    const started = Date.now();
    while (Date.now() - started < timeoutMs) {
      await busA.publish('failover-probe', text).catch((error: unknown) => {
        publishErrors += 1;
        lastPublishError = (error as Error).message;
      });
      await sleep(100);
      if (received.includes(text)) return Date.now() - started;
    }
    return undefined;
  };
  const upSamples: Array<{ at: number; up: Array<number | undefined> }> = [];
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      upSamples.push({ at: Date.now(), up: await Promise.all(gateways.map(storeUp)) });
      await sleep(200);
    }
  })();
  try {
    console.log(`${topology}: failover under load`);
    const before = await delivered('before', 5_000);
    await sleep(3_000);
    const unavailableBefore = await Promise.all(gateways.map(storeUnavailableTotal));
    const killedAt = Date.now();
    await kill();
    await waitFor(`${topology}: the replica is promoted`, promoted, 30_000);
    const promotedAt = Date.now();
    const busAfter = await delivered('after', 15_000);
    // Recovered: no failure for 3 s in a row (bounded at 30 s), then 5 s measured as "after".
    const recoveredBy = Date.now() + 30_000;
    while (Date.now() < recoveredBy) {
      const recent = load.samples.filter((s) => s.at > Date.now() - 3_000);
      if (recent.length > 0 && recent.every((s) => s.outcome === 'ok')) break;
      await sleep(250);
    }
    const afterFrom = Date.now();
    await sleep(5_000);
    await load.stop();
    sampling = false;
    await sampler;

    const during = load.samples.filter((s) => s.at >= killedAt && s.at < afterFrom);
    const beforeKill = load.samples.filter((s) => s.at < killedAt);
    const after = load.samples.filter((s) => s.at >= afterFrom);
    const failures = during.filter((s) => s.outcome !== 'ok');
    const window = failures.length > 0 ? (failures.at(-1)!.at - failures[0]!.at) / 1000 : 0;
    const unanswered = load.samples.filter((s) => s.outcome === 'unanswered').length;
    const unclear = failures.filter((s) => s.outcome !== 'fail-closed').length;
    const afterErrors = after.filter((s) => s.outcome !== 'ok').length;
    const downSeen = upSamples.filter((s) => s.at >= killedAt && s.at < afterFrom).some((s) => s.up.some((v) => v === 0));
    const upAfter = (await Promise.all(gateways.map(storeUp))).join('/');
    const unavailableAfter = await Promise.all(gateways.map(storeUnavailableTotal));
    const unavailableDelta = unavailableAfter.map((n, i) => `+${n - unavailableBefore[i]!}`).join('/');

    // Counted once: the exact user's window read back from Redis never holds more hits than calls that may have run.
    const reader = createRedisClient(store, 'commands', { commandTimeoutMs: 2_000, connectTimeoutMs: 2_000 });
    reader.on('error', () => undefined);
    await waitFor('a reading connection', async () => reader.status === 'ready', 10_000);
    const hits = await reader.zcard(`${prefix}ratelimit:300000:100000:t=exact|u=${exactUser}`);
    reader.disconnect();
    const countedOnce = hits <= load.exact.admitted + load.exact.failedClosed;

    note(topology, 'steady load before the kill', beforeKill.every((s) => s.outcome === 'ok'), `${beforeKill.length} calls, ${beforeKill.filter((s) => s.outcome !== 'ok').length} errors`);
    note(
      topology,
      topology === 'cluster' ? 'SIGKILL of a master under load' : 'SIGKILL of the Sentinel-watched master under load',
      unclear === 0 && unanswered === 0 && downSeen,
      `replica promoted ${((promotedAt - killedAt) / 1000).toFixed(1)} s after the kill; failing-call window ${window.toFixed(1)} s; ${during.length} calls until recovered, ${failures.length} failed closed (${tally(failures) || 'none'}); ${unclear} other errors; ${unanswered} unanswered; toolgate_store_up 0 seen: ${downSeen ? 'yes' : 'NO'}; toolgate_store_unavailable_total ${unavailableDelta}`,
    );
    note(topology, 'after the failover (5 s)', afterErrors === 0 && upAfter.split('/').every((v) => v === '1'), `${after.length} calls, ${afterErrors} errors; toolgate_store_up ${upAfter}`);
    note(topology, 'nothing counted twice', countedOnce, `the exact user's window holds ${hits} hits for ${load.exact.admitted} admitted + ${load.exact.failedClosed} failed-closed calls${hits < load.exact.admitted ? ` (${load.exact.admitted - hits} acknowledged hits lost with the killed master's unreplicated writes)` : ''}`);
    note(topology, 'event bus across the failover', before !== undefined && busAfter !== undefined, `delivered before (${before ?? '—'} ms) and after (${busAfter ?? 'NOT'} ms after promotion); ${publishErrors} publishes refused meanwhile${busAfter === undefined ? ` (last: ${lastPublishError}); received ${received.join(',')}` : ''}`);
  } finally {
    sampling = false;
    await load.stop();
    await Promise.allSettled([busA.close(), busB.close()]);
  }
}

// ---- TLS ----

async function tlsPhase(redisBin: string, dir: string, prefix: string): Promise<void> {
  const certs = await makeCertificates(join(dir, 'pki'));
  const tlsRedis = await startTlsRedis(redisBin, dir, certs);
  const url = `rediss://127.0.0.1:${tlsRedis.port}`;
  const [trusted] = await startGateways('tls', { url, tls: { ca: certs.ca } }, prefix, dir, 1);
  const token = await sign('tls-user', 'rl');
  const used = await call(trusted!.url, token, 'POST', '/v1/execute', { name: 'limited', arguments: {} });
  const up = await storeUp(trusted!);
  note('TLS', 'gateway with the CA that signed the server', used.status === 200 && up === 1, `starts; a rate-limited call answers ${used.status}; toolgate_store_up ${up}`);
  await trusted!.stop('SIGTERM');

  // The same server, a CA that signed nothing it presents: start-up stops with the reason.
  const configFile = join(dir, 'tls-untrusted.yaml');
  writeFileSync(configFile, stringify(configFor({ url, tls: { ca: certs.otherCa } }, prefix, await freePort())));
  const started = Date.now();
  const child = spawn(process.execPath, [serverJs], { env: { ...process.env, TOOLGATE_CONFIG: configFile, PORT: String(await freePort()), HOST: '127.0.0.1' }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve(null);
    }, 15_000);
    child.once('exit', (exitCode) => {
      clearTimeout(timer);
      resolve(exitCode);
    });
  });
  const line = stderr.trim().split('\n').find((l) => l.includes('not trusted')) ?? stderr.trim().split('\n')[0] ?? '';
  note('TLS', 'gateway with a CA it does not trust', code === 78 && line.includes('not trusted'), `exit ${code} after ${((Date.now() - started) / 1000).toFixed(1)} s: "${line.slice(0, 220)}"`);
  await tlsRedis.kill();
}

async function main(): Promise<void> {
  const redisBin = findExecutable('redis-server') ?? findExecutable('redis-server', '/usr/sbin:/usr/bin');
  const sentinelBin = findExecutable('redis-sentinel') ?? findExecutable('redis-sentinel', '/usr/sbin:/usr/bin');
  const missing = [!redisBin && 'redis-server', !findExecutable('redis-cli') && 'redis-cli', !findExecutable('openssl') && 'openssl'].filter(Boolean);
  if (!redisBin || missing.length > 0) {
    process.stderr.write(`test:redis-topologies needs ${missing.join(', ')}: apt-get install -y redis-server redis-sentinel openssl\n`);
    process.exit(2);
  }
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-topologies-'));
  console.log(`test:redis-topologies: logs in ${dir}`);

  // `--only=cluster|sentinel|tls` runs one part (when looking into it); CI runs all three.
  const only = /^--only=(\w+)$/.exec(process.argv.find((arg) => arg.startsWith('--only=')) ?? '')?.[1];
  const part = (name: string): boolean => only === undefined || only === name;

  // Cluster.
  if (part('cluster')) {
    const prefix = `topo-${randomBytes(4).toString('hex')}:`;
    const cluster = await startCluster(redisBin, dir);
    const store: RedisTopology = { cluster: { nodes: cluster.urls.slice(0, 3) } };
    const gateways = await startGateways('cluster', store, prefix, dir);
    const mastersBefore = await cluster.masters();
    console.log(`cluster: masters ${mastersBefore.map((m) => `:${m.port} [${m.slots}]`).join(', ')}; gateways ${gateways.map((g) => g.url).join(', ')}`);
    await sharedState('cluster', gateways);
    await slotDistribution(cluster, gateways, prefix);
    await clusterScripts(store, prefix);
    await freshClients(store, prefix);
    const victim = cluster.nodes.find((n) => n.port === mastersBefore[0]!.port)!;
    const witness = cluster.nodes.find((n) => n !== victim)!;
    await failover('cluster', gateways, store, prefix, () => victim.kill(), async () => {
      const masters = await cluster.masters(witness.port);
      return masters.length === 3 && !masters.some((m) => m.port === victim.port);
    });
    await Promise.all(gateways.map((g) => g.stop('SIGTERM')));
    await Promise.all(cluster.nodes.map((n) => n.kill()));
  }

  // Sentinel.
  if (part('sentinel')) {
    const prefix = `topo-${randomBytes(4).toString('hex')}:`;
    const group = await startSentinels(redisBin, sentinelBin, dir);
    const store: RedisTopology = { sentinel: { name: group.name, sentinels: group.sentinels.map((s) => s.address) } };
    const gateways = await startGateways('sentinel', store, prefix, dir);
    console.log(`sentinel: master :${group.master.port}, replica :${group.replica.port}, sentinels ${group.sentinels.map((s) => `:${s.port}`).join(', ')}`);
    await sharedState('sentinel', gateways);
    await failover('sentinel', gateways, store, prefix, () => group.master.kill(), async () => (await group.currentMasterPort()) === group.replica.port);
    await Promise.all(gateways.map((g) => g.stop('SIGTERM')));
    await Promise.all([group.master, group.replica, ...group.sentinels].map((n) => n.kill()));
  }

  if (part('tls')) await tlsPhase(redisBin, dir, `topo-${randomBytes(4).toString('hex')}:`);
  rmSync(dir, { recursive: true, force: true });
}

function table(): string {
  const lines = ['| topology | check | holds | result |', '|---|---|---|---|'];
  for (const row of rows) lines.push(`| ${row.topology} | ${row.check} | ${row.ok ? 'yes' : '**NO**'} | ${row.result} |`);
  return lines.join('\n');
}

const watchdog = setTimeout(() => {
  process.stderr.write(`test:redis-topologies: stopped after ${RUN_BOUND_MS / 1000} s\n${table()}\n`);
  killAll();
  process.exit(1);
}, RUN_BOUND_MS);
process.on('SIGINT', () => {
  killAll();
  process.exit(130);
});

const started = Date.now();
main().then(
  () => {
    clearTimeout(watchdog);
    const output = `${table()}\n\n${new Date().toISOString()}; Node ${process.version}; run took ${Math.round((Date.now() - started) / 1000)} s.\n`;
    console.log(`\n${output}`);
    writeFileSync(join(root, 'bench', 'redis-topologies-results.md'), `# npm run test:redis-topologies — latest run\n\n${output}`);
    killAll();
    process.exit(rows.every((row) => row.ok) ? 0 : 1);
  },
  (error: unknown) => {
    clearTimeout(watchdog);
    killAll();
    process.stderr.write(`test:redis-topologies failed: ${error instanceof Error ? error.stack : String(error)}\n${table()}\n`);
    process.exit(1);
  },
);
