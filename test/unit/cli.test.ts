// `npx toolgate hash-key` gives the value `auth.apiKeys[].sha256` needs (the gateway then accepts the key),
// and `npm start -- --config FILE` picks the config file the way TOOLGATE_CONFIG does.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { configPathFrom, runCli, UsageError } from '../../src/cli.js';
import { packageRoot } from '../../src/config/demo.js';
import { buildTestApp, testConfig } from '../helpers/build.js';

const root = packageRoot();
const stdin = (text: string) => () => Promise.resolve(text);
const apps: FastifyInstance[] = [];
afterAll(async () => Promise.all(apps.map((app) => app.close())));

describe('toolgate hash-key', () => {
  it('prints the sha256 of the key on stdin (without its trailing newline), and the gateway accepts that key', async () => {
    const printed = await runCli(['hash-key'], stdin('my-team-key\n'));
    expect(printed).toMatch(/^[0-9a-f]{64}\n$/);
    expect(await runCli(['hash-key'], stdin('my-team-key'))).toBe(printed);
    const app = await buildTestApp(testConfig({ auth: { apiKeys: [{ id: 'team', sha256: printed.trim(), tenant: 'acme', user: 'team', roles: [] }] } }));
    apps.push(app);
    const listed = await app.inject({ method: 'GET', url: '/v1/tools', headers: { authorization: 'Bearer my-team-key' } });
    expect(listed.statusCode).toBe(200);
    const wrong = await app.inject({ method: 'GET', url: '/v1/tools', headers: { authorization: 'Bearer my-team-key\n' } });
    expect(wrong.statusCode).toBe(401);
  });

  it('--new makes a random key and prints it with its sha256', async () => {
    const [keyLine, digestLine] = (await runCli(['hash-key', '--new'], stdin(''))).trim().split('\n');
    const key = /^key:\s+(tg_[\w-]{32})$/.exec(keyLine!)?.[1];
    expect(key).toBeDefined();
    expect(digestLine).toBe(`sha256: ${(await runCli(['hash-key'], stdin(key!))).trim()}`);
    expect(await runCli(['hash-key', '--new'], stdin(''))).not.toContain(key!);
  });

  it('refuses a key on the command line, an empty stdin, several lines and an unknown command, with the usage', async () => {
    await expect(runCli(['hash-key', 'secret'], stdin(''))).rejects.toThrow(/pipe it in[\s\S]*usage:/);
    await expect(runCli(['hash-key'], stdin('\n'))).rejects.toThrow(UsageError);
    await expect(runCli(['hash-key'], stdin('a\nb\n'))).rejects.toThrow(/one key per call/);
    await expect(runCli(['hash'], stdin(''))).rejects.toThrow(/unknown command "hash"/);
    expect(await runCli([], stdin(''))).toContain('toolgate hash-key');
  });

  it('is the bin of package.json, which runs the compiled src/cli.ts', async () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { bin: Record<string, string> };
    expect(pkg.bin).toEqual({ toolgate: 'bin/toolgate.mjs' });
    expect(readFileSync(join(root, pkg.bin.toolgate!), 'utf8')).toContain("'../dist/src/cli.js'");
    // After a build (npm start, npm run build) the bin runs end to end.
    if (!existsSync(join(root, 'dist/src/cli.js'))) return;
    const child = promisify(execFile)(process.execPath, [join(root, 'bin/toolgate.mjs'), 'hash-key'], { timeout: 20_000 });
    child.child.stdin!.end('my-team-key\n');
    expect((await child).stdout).toBe(await runCli(['hash-key'], stdin('my-team-key')));
  });
});

describe('npm start -- --config FILE', () => {
  it('takes --config (or --config=, -c) over TOOLGATE_CONFIG, TOOLGATE_CONFIG alone, and nothing means the demo', () => {
    expect(configPathFrom(['--config', 'a.yaml'], { TOOLGATE_CONFIG: 'b.yaml' })).toBe('a.yaml');
    expect(configPathFrom(['--config=a.yaml'], {})).toBe('a.yaml');
    expect(configPathFrom(['-c', 'a.yaml'], {})).toBe('a.yaml');
    expect(configPathFrom([], { TOOLGATE_CONFIG: 'b.yaml' })).toBe('b.yaml');
    expect(configPathFrom([], { TOOLGATE_CONFIG: '' })).toBeUndefined();
    expect(configPathFrom([], {})).toBeUndefined();
  });

  it('refuses an unknown option or a stray argument with the usage', () => {
    expect(() => configPathFrom(['--conf', 'a.yaml'], {})).toThrow(UsageError);
    expect(() => configPathFrom(['a.yaml'], {})).toThrow(/usage:/);
  });
});
