// A gateway killed (SIGKILL) between two checkpoints: its log verifies, every line it holds is in the
// verified prefix, and the verifier reports exactly how far the signed checkpoints anchor it.
import type { ChildProcess } from 'node:child_process';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAuditCli } from '../../src/audit/cli.js';
import { packageRoot } from '../../src/config/demo.js';
import { startServer } from '../helpers/server-process.js';

const API_KEY = 'tg_audit_crash_key';
const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
let dir: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tg-audit-crash-'));
});
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

const readLines = async (file: string): Promise<Array<Record<string, unknown>>> =>
  (await readFile(file, 'utf8').catch(() => '')).split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);

/** Polls until `check` holds (bounded: 10 s). */
async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('audit chain: a crash between checkpoints', () => {
  it('reports the verified prefix exactly: every line written, anchored up to the last checkpoint', { timeout: 60_000 }, async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    await writeFile(join(dir, 'audit-k1.pem'), privateKey.export({ type: 'pkcs8', format: 'pem' }));
    const keys = join(dir, 'keys.pem');
    await writeFile(keys, `# key-id: k1\n${publicKey.export({ type: 'spki', format: 'pem' }).toString()}`);
    const log = join(dir, 'audit.log');
    const checkpoints = join(dir, 'checkpoints.log');
    const config = join(dir, 'config.yaml');
    await writeFile(
      config,
      `
auth:
  apiKeys:
    - { id: t, sha256: "${sha256(API_KEY)}", tenant: acme, user: tester, roles: [admin] }
audit:
  sink: file
  path: audit.log
  chain:
    checkpointEvery: 5
    checkpointSeconds: 3600
    checkpoints: { sink: file, path: checkpoints.log }
    signing: { keys: [{ id: k1, privateKey: "\${file:audit-k1.pem}" }] }
functions:
  - module: ${JSON.stringify(join(packageRoot(), 'test/fixtures/functions/basic.mjs'))}
tenants:
  acme: {}
logging: { level: info }
metrics: { enabled: false }
`,
    );
    const server = await startServer(config, children, { PORT: '0' });
    const listening = await server.logLine((line) => typeof line.msg === 'string' && line.msg.startsWith('Server listening'));
    const base = /(http:\/\/127\.0\.0\.1:\d+)/.exec(String(listening.msg))![1]!;
    const call = async (city: string): Promise<void> => {
      const response = await fetch(`${base}/v1/execute`, { method: 'POST', headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'get_weather', arguments: { city } }) });
      expect(response.status).toBe(200);
      await response.json();
    };
    for (let index = 0; index < 10; index += 1) await call(`c${index}`);
    await until('the checkpoint of seq 10', async () => (await readLines(checkpoints)).some((record) => record.seq === 10));
    // Two more: fewer than checkpointEvery, so no checkpoint covers them. They reach the file, then the process dies.
    await call('c10');
    await call('c11');
    await until('12 lines in the audit log', async () => (await readLines(log)).length === 12);
    server.child.kill('SIGKILL');
    expect((await server.exit).signal).toBe('SIGKILL');

    const anchored = Math.max(...(await readLines(checkpoints)).map((record) => record.seq as number));
    expect(anchored).toBe(10);
    const result = await runAuditCli(['verify', '--log', log, '--checkpoints', checkpoints, '--public-keys', keys, '--json']);
    expect(result.exitCode).toBe(0);
    const report = JSON.parse(result.stdout) as { ok: boolean; chains: Array<{ chain: string; events: number; verified: number; lastSeq: number; anchoredSeq: number }> };
    expect(report.ok).toBe(true);
    expect(report.chains).toHaveLength(1);
    expect(report.chains[0]).toMatchObject({ events: 12, verified: 12, lastSeq: 12, anchoredSeq: 10 });
    const text = await runAuditCli(['verify', '--log', log, '--checkpoints', checkpoints, '--public-keys', keys]);
    expect(text.stdout).toMatch(/: OK; 12 events, 12 verified, anchored to seq 10 by \d+ checkpoints, 2 after the last checkpoint \(not anchored\)/);
  });
});
