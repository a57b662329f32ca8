// The start-up contract for a configuration the gateway cannot serve, whichever step finds it (the schema,
// the references between keys, a policy's options, a module that does not load, the environment): the real
// server process exits 78 with exactly one line on stderr, naming the file and the path, what is wrong and,
// where it is known, what would be right. No stack, no listening line.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/config/demo.js';

const root = packageRoot();
const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
const KEY = `{ id: t, sha256: "${sha256('tg_config_errors')}", tenant: acme, user: tester, roles: [] }`;
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolgate-config-errors-'));
  await writeFile(join(dir, 'strict-policy.mjs'), "export default (options) => { if (!options?.level) throw new Error('options.level is required'); return (call, ctx, next) => next(call, ctx); };\n");
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

const base = (rest: string, tenant = '{}') => `auth:\n  apiKeys: [${KEY}]\naudit: { sink: "off" }\nmetrics: { enabled: false }\ntenants:\n  acme: ${tenant}\n${rest}`;

interface Kind {
  kind: string;
  yaml: string;
  env?: Record<string, string>;
  /** The path named in the line. */
  path: string;
  /** What is wrong and what would be right. */
  says: RegExp;
}

const KINDS: Kind[] = [
  { kind: 'YAML that does not parse', yaml: 'tenants: { acme: {\n', path: '', says: /invalid YAML/ },
  { kind: 'a typo in a top-level key', yaml: base('metrcs: { enabled: false }\n'), path: '/', says: /unknown key "metrcs"; did you mean "metrics"\?/ },
  { kind: 'a value of the wrong type', yaml: base('server: { port: eighty }\n'), path: '/server/port', says: /must be integer/ },
  { kind: 'an environment variable that is not set', yaml: base('server: { port: "${env:TG_TEST_UNSET_PORT}" }\n'), path: '/server/port', says: /environment variable TG_TEST_UNSET_PORT is not set/ },
  {
    kind: 'a key pasted where its hash belongs',
    yaml: 'auth:\n  apiKeys: [{ id: t, sha256: "tg_pasted_key_not_hash", tenant: acme, user: u }]\ntenants: { acme: {} }\nmetrics: { enabled: false }\n',
    path: '/auth/apiKeys/0/sha256',
    says: /not the key: use `toolgate hash-key`/,
  },
  { kind: 'a key of a tenant that is not configured', yaml: base('', '{}').replace('tenant: acme', 'tenant: acne'), path: '/auth/apiKeys/0/tenant', says: /tenant "acne" is not configured; did you mean "acme"\?/ },
  { kind: 'a typo in a role', yaml: base('').replace('roles: []', 'roles: [admn]'), path: '/auth/apiKeys/0/roles/0', says: /unknown role "admn"; did you mean "admin"\?/ },
  { kind: 'a typo in a policy option', yaml: base('', '{ policies: { rate-limit: { limt: 5 } } }'), path: '/tenants/acme', says: /policies\.rate-limit\.limt is not a known option; did you mean "limit"\?/ },
  { kind: 'an unknown policy option', yaml: base('', '{ policies: { retry: { jitter: true } } }'), path: '/tenants/acme', says: /policies\.retry\.jitter is not a known option; known options: attempts, baseMs, maxMs, maxRetryAfterMs, on/ },
  { kind: 'an unknown policy', yaml: base('', '{ policies: { ratelimit: { limit: 5 } } }'), path: '/tenants/acme', says: /policies\.ratelimit is not a known policy; did you mean "rate-limit"\?/ },
  { kind: 'a custom policy module that is missing', yaml: base('', '{ policies: { custom: [{ module: ./nope-policy.mjs, before: approval }] } }'), path: '/tenants/acme', says: /policies\.custom\.0\.module cannot be loaded/ },
  {
    kind: 'a custom policy that refuses its options',
    yaml: base('', '{ policies: { custom: [{ module: ./strict-policy.mjs, before: approval, options: {} }] } }'),
    path: '/tenants/acme',
    says: /policies\.custom\.0\.options refused by .*strict-policy\.mjs: options\.level is required/,
  },
  { kind: 'a function module that is missing', yaml: base('functions:\n  - module: ./nope-tools.mjs\n'), path: '/functions/0/module', says: /nope-tools\.mjs: module not found/ },
  { kind: 'an MCP service a tenant names that is not declared', yaml: base('', '{ mcpServices: [everything] }'), path: '/tenants/acme/mcpServices', says: /unknown global MCP service "everything"/ },
  { kind: 'a port in the environment that is not a number', yaml: base(''), env: { PORT: 'http' }, path: 'PORT', says: /must be a port number 0-65535/ },
];

async function start(file: string, env: Record<string, string> = {}): Promise<{ code: number | null; stderr: string; stdout: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'src/server.ts')], {
    cwd: root,
    env: { ...process.env, TOOLGATE_CONFIG: file, HOST: '127.0.0.1', PORT: '0', METRICS_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  // A process that served instead of failing is stopped: the assertion below then names what it printed.
  const stop = setTimeout(() => child.kill('SIGKILL'), 45_000);
  const [code] = (await once(child, 'close')) as [number | null];
  clearTimeout(stop);
  return { code, stderr, stdout };
}

/** Runs `work` over `items`, `width` at a time (the machine is shared). */
async function inBatches<T, R>(items: readonly T[], width: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let at = 0; at < items.length; at += width) results.push(...(await Promise.all(items.slice(at, at + width).map(work))));
  return results;
}

describe('a configuration the gateway cannot serve', () => {
  it('every kind of error: exit 78, one line on stderr naming the file and the path, what is wrong and what would be right', { timeout: 300_000 }, async () => {
    const outcomes = await inBatches(KINDS, 4, async ({ kind, yaml, env }, ) => {
      const file = join(dir, `${kind.replace(/\W+/g, '-')}.yaml`);
      await writeFile(file, yaml);
      return { kind, file, ...(await start(file, env)) };
    });
    for (const [index, { kind, file, code, stderr, stdout }] of outcomes.entries()) {
      const { path, says } = KINDS[index]!;
      expect({ kind, code }).toEqual({ kind, code: 78 });
      expect(stderr.endsWith('\n') && stderr.split('\n').length, `${kind}: ${stderr}`).toBe(2);
      expect(stderr, kind).toMatch(/^toolgate: /);
      expect(stderr, kind).not.toMatch(/\bat .*:\d+:\d+/);
      // The environment is named instead of a file when the value came from it.
      if (path === 'PORT') expect(stderr, kind).toContain('environment PORT');
      else expect(stderr, kind).toContain(`config ${file}`);
      if (path !== '' && path !== 'PORT') expect(stderr, kind).toContain(` ${path}`);
      expect(stderr, kind).toMatch(says);
      expect(stdout, kind).not.toMatch(/listening/i);
    }
  });
});
