// `npx toolgate hash-key` gives the value `auth.apiKeys[].sha256` needs (the gateway then accepts the key),
// and `npm start -- --config FILE` picks the config file the way TOOLGATE_CONFIG does.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildForCheck, CheckFailed, configPathFrom, runCli, startAnswer, UsageError, version } from '../../src/cli.js';
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

describe('--help and --version, everywhere', () => {
  it('explain instead of being taken as a key or a file, and print the package version', async () => {
    for (const args of [['--help'], ['-h'], ['help'], ['hash-key', '--help'], ['hash-key', '-h'], ['check', '--help']]) {
      expect(await runCli(args, () => Promise.reject(new Error('stdin must not be read'))), args.join(' ')).toMatch(/^usage:[\s\S]*toolgate check FILE/);
    }
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
    expect(version()).toBe(pkg.version);
    expect(await runCli(['--version'], stdin(''))).toBe(`toolgate ${pkg.version}\n`);
    await expect(runCli(['hash-key', '--verbose'], stdin('k'))).rejects.toThrow(/hash-key takes --new, --help or nothing/);
  });

  it('npm start -- --help / --version answer before anything is built or listened', () => {
    expect(startAnswer(['--help'])).toMatch(/^usage:/);
    expect(startAnswer(['--config', 'x.yaml', '-h'])).toMatch(/^usage:/);
    expect(startAnswer(['--version'])).toMatch(/^toolgate \d+\.\d+\.\d+/);
    expect(startAnswer(['--config', 'x.yaml'])).toBeUndefined();
  });
});

describe('toolgate check FILE', () => {
  it('says a good file is valid, and names what is wrong in a bad one (CheckFailed: exit 78) without serving it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-check-'));
    try {
      const write = (name: string, tenant: string) => {
        const file = join(dir, name);
        writeFileSync(file, `metrics: { enabled: false }\naudit: { sink: "off" }\ntenants:\n  acme: ${tenant}\n`);
        return file;
      };
      const good = write('good.yaml', '{ policies: { rate-limit: { limit: 5 } } }');
      expect(await runCli(['check', good], stdin(''), buildForCheck)).toBe(`config ${good} is valid: 1 tenant\n`);
      // Only building finds a policy's options wrong: check builds, as a start would.
      const typo = write('typo.yaml', '{ policies: { rate-limit: { limt: 5 } } }');
      await expect(runCli(['check', typo], stdin(''), buildForCheck)).rejects.toThrow(
        new CheckFailed(`config ${typo} /tenants/acme: policies.rate-limit.limt is not a known option; did you mean "limit"?`),
      );
      await expect(runCli(['check', join(dir, 'missing.yaml')], stdin(''), buildForCheck)).rejects.toThrow(/missing\.yaml: cannot read \(ENOENT\)/);
      await expect(runCli(['check'], stdin(''), buildForCheck)).rejects.toThrow(UsageError);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
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
