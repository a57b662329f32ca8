import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfigFile } from '../../../src/config/load.js';
import { demoBanner, demoConfig, demoExports } from '../../../src/config/demo.js';

/** Runs a bash script (the way a user pastes the banner's line) and returns its outcome. */
function runBash(script: string, env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('bash', ['-c', script], { env, timeout: 10_000 }, (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }));
  });
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolgate-config-'));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

async function load(yaml: string, env: NodeJS.ProcessEnv = {}) {
  const path = join(dir, `c-${Math.random().toString(36).slice(2)}.yaml`);
  await writeFile(path, yaml);
  return loadConfigFile(path, env);
}

describe('loadConfigFile', () => {
  it('fills every default and resolves relative paths against the file', async () => {
    const config = await load('tenants:\n  acme: {}\nfunctions:\n  - module: ./tools.mjs\naudit: { sink: file, path: ./audit.log }\n');
    expect(config.server).toEqual({
      host: '0.0.0.0', port: 8080, bodyLimit: 1048576, shutdownGraceMs: 10000, drainDelayMs: 0, maxInFlight: 1024,
      maxPublicInFlight: 64, bodyTimeoutMs: 10000, maxConnectionsPerAddress: 256, trustProxy: false,
      loadShedding: { maxEventLoopDelayMs: 0, maxEventLoopUtilization: 0, sampleIntervalMs: 500, retryAfterSec: 2 },
    });
    expect(config.metrics).toEqual({ enabled: true, host: '127.0.0.1', port: 9464, maxTenantSeries: 1000 });
    expect(config.tenants.acme).toMatchObject({ tools: { allow: ['*'], deny: [] }, builtins: [], mode: 'default', mcpServices: [] });
    expect(config.functions[0]).toEqual({ module: join(dir, 'tools.mjs') });
    expect(config.audit).toEqual({ sink: 'file', path: join(dir, 'audit.log') });
  });

  it('fills the defaults of either/or entries from the branch that matched', async () => {
    const config = await load([
      'store: { kind: redis, url: "redis://127.0.0.1:6379" }',
      'functions:',
      '  - { name: create_ticket, http: { url: "https://tickets.example/api" } }',
      'rag:',
      '  - { name: kb, backend: { kind: http, url: "https://rag.example/search" } }',
      'mcp:',
      '  local:',
      '    - { service: fs, transport: stdio, command: npx }',
      '  global:',
      '    - { id: remote, transport: sse, url: "https://mcp.example/sse" }',
      '    - { id: proc, transport: stdio, command: node }',
      '',
    ].join('\n'));
    expect(config.store).toEqual({ kind: 'redis', url: 'redis://127.0.0.1:6379', prefix: 'toolgate:', onUnavailable: 'fail-closed', commandTimeoutMs: 1000 });
    expect(config.functions[0]).toEqual({
      name: 'create_ticket', description: '', inputSchema: { type: 'object', properties: {} },
      http: { method: 'POST', url: 'https://tickets.example/api', headers: {}, timeoutMs: 10000 },
    });
    expect(config.rag[0]).toMatchObject({ backend: { kind: 'http', url: 'https://rag.example/search', headers: {}, timeoutMs: 10000 }, topK: { default: 5, max: 20 } });
    expect(config.mcp.local[0]).toEqual({ service: 'fs', transport: 'stdio', command: 'npx', args: [], env: {} });
    const [remote, proc] = config.mcp.global;
    expect(remote).toEqual({ id: 'remote', transport: 'sse', url: 'https://mcp.example/sse', headers: {}, required: false, defer: false, pin: true, forwardIdentity: {} });
    expect(proc).toEqual({ id: 'proc', transport: 'stdio', command: 'node', args: [], env: {}, required: false, defer: false, pin: true, forwardIdentity: {} });
  });

  it('reads secrets from the environment', async () => {
    const config = await load('auth:\n  jwt: { secret: "${env:TG_SECRET}" }\n', { TG_SECRET: 'x'.repeat(40) });
    expect(config.auth.jwt?.secret).toBe('x'.repeat(40));
  });

  it('names the missing environment variable and where it is used', async () => {
    await expect(load('auth:\n  jwt: { secret: "${env:NOPE}" }\n')).rejects.toThrow('.yaml /auth/jwt/secret: environment variable NOPE is not set');
  });

  it('reads secrets from files, trimming the trailing newline, relative paths against the config file', async () => {
    await writeFile(join(dir, 'jwt-secret'), `${'s'.repeat(40)}\n`);
    await writeFile(join(dir, 'token'), 'tok\r\n');
    const config = await load(`auth:\n  jwt: { secret: "\${file:${join(dir, 'jwt-secret')}}" }\nfunctions:\n  - name: t\n    http: { url: "https://x.example/api", headers: { authorization: "Bearer \${file:./token}" } }\n`);
    expect(config.auth.jwt?.secret).toBe('s'.repeat(40));
    expect(config.functions[0]).toMatchObject({ http: { headers: { authorization: 'Bearer tok' } } });
  });

  it('names the key whose secret file is missing or not a regular file, and never expands a value it read', async () => {
    await expect(load('auth:\n  jwt: { secret: "${file:/run/secrets/toolgate-nope}" }\n')).rejects.toThrow('.yaml /auth/jwt/secret: cannot read secret file /run/secrets/toolgate-nope (ENOENT)');
    await expect(load(`auth:\n  jwt: { secret: "\${file:${dir}}" }\n`)).rejects.toThrow(`.yaml /auth/jwt/secret: secret file ${dir} is not a regular file`);
    const config = await load('auth:\n  jwt: { secret: "${env:TG_SECRET}" }\n', { TG_SECRET: '${file:/etc/passwd}' + 'x'.repeat(40) });
    expect(config.auth.jwt?.secret).toBe('${file:/etc/passwd}' + 'x'.repeat(40));
  });

  it('names an unknown key', async () => {
    await expect(load('tenants:\n  acme:\n    tool: {}\n')).rejects.toThrow('/tenants/acme: unknown key "tool"');
    // A map's entries are checked whatever their key holds (a `^.*$` key pattern would skip this one).
    await expect(load('tenants:\n  "ac\\nme":\n    tool: {}\n')).rejects.toThrow('unknown key "tool"');
  });

  it('names a value of the wrong type or outside its enum', async () => {
    await expect(load('server: { port: "eighty" }\n')).rejects.toThrow('/server/port: must be integer');
    await expect(load('tenants:\n  acme: { mode: sometimes }\n')).rejects.toThrow('/tenants/acme/mode: must be one of ["default","readonly"]');
  });

  it('refuses an unknown global MCP service in a tenant allowlist and an API key for an unknown tenant', async () => {
    await expect(load('tenants:\n  acme: { mcpServices: [ghost] }\n')).rejects.toThrow('unknown global MCP service "ghost"');
    const key = 'a'.repeat(64);
    await expect(load(`auth:\n  apiKeys: [{ id: k, sha256: "${key}", tenant: nobody, user: u }]\n`)).rejects.toThrow('tenant "nobody" is not configured');
  });

  it('refuses invalid YAML, duplicate keys and prototype keys', async () => {
    await expect(load('tenants: [\n')).rejects.toThrow('invalid YAML');
    await expect(load('tenants: {}\ntenants: {}\n')).rejects.toThrow('invalid YAML');
    await expect(load('tenants:\n  __proto__: { polluted: true }\n')).rejects.toThrow(ConfigError);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('refuses a JWT section without any key material', async () => {
    await expect(load('auth:\n  jwt: { issuer: x }\n')).rejects.toThrow('one of secret, publicKey or jwksUrl is required');
  });

  it('reads an interpolated number or boolean as one where the schema wants it, for every such key', async () => {
    const config = await load(
      'server: { port: "${env:API_PORT}", bodyLimit: "${env:BODY_LIMIT}" }\nmetrics: { port: "${env:METRICS_PORT}", enabled: "${env:METRICS_ON}" }\ntenants: { acme: { policies: { rate-limit: { limit: 5 } } } }\n',
      { API_PORT: '0', BODY_LIMIT: '2048', METRICS_PORT: '9999', METRICS_ON: 'true' },
    );
    expect(config.server).toMatchObject({ port: 0, bodyLimit: 2048 });
    expect(config.metrics).toMatchObject({ port: 9999, enabled: true });
  });

  it('leaves a literal string where a number belongs an error, and names a variable that is not a number', async () => {
    await expect(load('metrics: { port: "9464" }\n')).rejects.toThrow(/\/metrics\/port: must be integer/);
    await expect(load('metrics: { port: "${env:METRICS_PORT}" }\n', { METRICS_PORT: 'nine' })).rejects.toThrow(/\/metrics\/port: must be integer/);
  });

  it('names the file in every error, suggests the key a typo meant, and says how to hash a pasted key', async () => {
    const typo = load('metrics: { prot: 9000 }\n');
    await expect(typo).rejects.toThrow(/^config \/.*\.yaml is invalid: \/metrics: unknown key "prot"; did you mean "port"\?$/);
    const pasted = load('auth: { apiKeys: [{ id: k, sha256: "tg_my_secret_key", tenant: acme, user: u }] }\ntenants: { acme: {} }\n');
    await expect(pasted).rejects.toThrow(/\.yaml is invalid: \/auth\/apiKeys\/0\/sha256: must be the key's SHA-256 \(64 hex characters\), not the key: use `toolgate hash-key`/);
    await expect(pasted).rejects.not.toThrow(/tg_my_secret_key/);
    await expect(load('tenants: { acme: { mcpServices: [nope] } }\n')).rejects.toThrow(/^config \/.*\.yaml \/tenants\/acme\/mcpServices: unknown global MCP service "nope"$/);
  });

  it('refuses an API key with a role nobody defines, suggesting the one it meant', async () => {
    const key = (roles: string) => `auth: { apiKeys: [{ id: k, sha256: "${'a'.repeat(64)}", tenant: acme, user: u, roles: ${roles} }] }\n`;
    await expect(load(`${key('[admn]')}tenants: { acme: {} }\n`)).rejects.toThrow(/\/auth\/apiKeys\/0\/roles\/0: unknown role "admn"; did you mean "admin"\?/);
    await expect(load(`${key('[auditor]')}tenants: { acme: {} }\n`)).rejects.toThrow(/unknown role "auditor"; known roles: admin, approver \(define others under tenants.acme.roles\)/);
    const defined = await load(`${key('[viewer, approver]')}tenants: { acme: { roles: { viewer: { deny: ["write_*"] } } } }\n`);
    expect(defined.auth.apiKeys[0]!.roles).toEqual(['viewer', 'approver']);
  });

  it('reports a missing file clearly', async () => {
    await expect(loadConfigFile(join(dir, 'missing.yaml'))).rejects.toThrow('cannot read (ENOENT)');
  });
});

describe('the embedded demo', () => {
  it('uses TOOLGATE_DEV_API_KEY when set and keeps only its hash', () => {
    const demo = demoConfig({ TOOLGATE_DEV_API_KEY: 'my-dev-key' });
    expect(demo.generated).toBe(false);
    expect(demo.apiKey).toBe('my-dev-key');
    expect(JSON.stringify(demo.config)).not.toContain('my-dev-key');
    expect(demo.config.tenants.demo).toBeDefined();
  });

  it('has a global operator key apart from the demo tenant admin key', () => {
    const demo = demoConfig({ TOOLGATE_DEV_API_KEY: 'my-dev-key', TOOLGATE_DEV_OPERATOR_KEY: 'my-operator-key' });
    expect(demo).toMatchObject({ operatorKey: 'my-operator-key', operatorKeyGenerated: false });
    expect(demo.config.auth.operators).toEqual([{ apiKey: 'operator' }]);
    expect(JSON.stringify(demo.config)).not.toContain('my-operator-key');
    const generated = demoConfig({});
    expect(generated.operatorKeyGenerated).toBe(true);
    expect(generated.operatorKey).not.toBe(generated.apiKey);
  });

  it('prints one export line with the variables of the examples, naming (never echoing) keys chosen by env, and stopping on an empty one', () => {
    const chosen = demoConfig({ TOOLGATE_DEV_API_KEY: 'my-dev-key', TOOLGATE_DEV_APPROVER_KEY: 'my-approver-key', TOOLGATE_DEV_OPERATOR_KEY: 'my-operator-key' });
    expect(demoExports(chosen, 8080)).toBe(
      'export TOOLGATE_URL=http://localhost:8080 TOOLGATE_API_KEY="${TOOLGATE_DEV_API_KEY:?set TOOLGATE_DEV_API_KEY in this shell too}"' +
        ' TOOLGATE_APPROVER_KEY="${TOOLGATE_DEV_APPROVER_KEY:?set TOOLGATE_DEV_APPROVER_KEY in this shell too}"' +
        ' TOOLGATE_OPERATOR_KEY="${TOOLGATE_DEV_OPERATOR_KEY:?set TOOLGATE_DEV_OPERATOR_KEY in this shell too}"',
    );
    const generated = demoConfig({});
    expect(demoExports(generated, 9000)).toBe(
      `export TOOLGATE_URL=http://localhost:9000 TOOLGATE_API_KEY=${generated.apiKey} TOOLGATE_APPROVER_KEY=${generated.approverKey} TOOLGATE_OPERATOR_KEY=${generated.operatorKey}`,
    );
  });

  it('export line: a shell without the chosen variable stops naming it instead of exporting an empty key', async () => {
    const chosen = demoConfig({ TOOLGATE_DEV_API_KEY: 'my-dev-key' });
    const script = `${demoExports(chosen, 8080)}; echo "key=$TOOLGATE_API_KEY operator=$TOOLGATE_OPERATOR_KEY"`;
    const { TOOLGATE_DEV_API_KEY: _unset, ...rest } = process.env;
    const withIt = await runBash(script, { ...rest, TOOLGATE_DEV_API_KEY: 'my-dev-key' });
    expect(withIt).toMatchObject({ code: 0, stdout: `key=my-dev-key operator=${chosen.operatorKey}\n` });
    const without = await runBash(script, rest);
    expect(without.code).not.toBe(0);
    expect(without.stderr).toContain('TOOLGATE_DEV_API_KEY: set TOOLGATE_DEV_API_KEY in this shell too');
    expect(without.stdout).toBe('');
  });

  it('banner: prints every generated key, names the variable of a chosen one, and always shows the operator key', () => {
    const generated = demoConfig({});
    const banner = demoBanner(generated, 8080);
    for (const key of [generated.apiKey, generated.approverKey, generated.operatorKey]) expect(banner.split(key).length - 1, key).toBe(2); // key line + export line
    expect(banner).toContain('sign in with one of these keys');
    const chosen = demoConfig({ TOOLGATE_DEV_API_KEY: 'my-dev-key', TOOLGATE_DEV_APPROVER_KEY: 'my-approver-key', TOOLGATE_DEV_OPERATOR_KEY: 'my-operator-key' });
    const named = demoBanner(chosen, 8080);
    expect(named).not.toMatch(/my-(dev|approver|operator)-key/);
    expect(named).toMatch(/API key .*:\s+the value of \$TOOLGATE_DEV_API_KEY$/m);
    expect(named).toMatch(/approver key .*:\s+the value of \$TOOLGATE_DEV_APPROVER_KEY$/m);
    expect(named).toMatch(/operator key .*:\s+the value of \$TOOLGATE_DEV_OPERATOR_KEY$/m);
  });

  it('generates a random key when none is set', () => {
    const a = demoConfig({});
    const b = demoConfig({});
    expect(a.generated).toBe(true);
    expect(a.apiKey).not.toBe(b.apiKey);
    expect(a.apiKey.length).toBeGreaterThan(30);
  });
});
