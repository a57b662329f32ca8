// Packaging: docker-compose.yml passes Debian's `docker-compose config -q`, the Dockerfile keeps its
// production properties, and the compose example config loads like any other config file.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { packageRoot } from '../src/config/demo.js';
import { loadConfigFile } from '../src/config/load.js';

const run = promisify(execFile);
const root = packageRoot();

async function hasBinary(name: string): Promise<boolean> {
  try {
    await run('sh', ['-c', `command -v ${name}`]);
    return true;
  } catch {
    return false;
  }
}

const composeAvailable = await hasBinary('docker-compose');
if (!composeAvailable) {
  console.warn('packaging.test: docker-compose is not installed; skipping `docker-compose config -q` (apt-get install -y docker-compose)');
}

/** The Dockerfile's stages: each FROM line starts one, with the instructions that follow it. */
function stages(dockerfile: string): string[][] {
  const lines = dockerfile
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
  const result: string[][] = [];
  for (const line of lines) {
    if (/^FROM\s/i.test(line)) result.push([line]);
    else result.at(-1)?.push(line);
  }
  return result;
}

describe('docker-compose.yml', () => {
  it.skipIf(!composeAvailable)('passes `docker-compose config -q`', async () => {
    const { stderr } = await run('docker-compose', ['-f', join(root, 'docker-compose.yml'), 'config', '-q'], { cwd: root, timeout: 20_000 });
    expect(stderr).toBe('');
  });

  it('runs the gateway with a healthcheck, Redis, and Prometheus scraping the gateway', async () => {
    const compose = parseYaml(await readFile(join(root, 'docker-compose.yml'), 'utf8')) as {
      services: Record<string, { build?: unknown; healthcheck?: { test?: string[] }; ports?: string[]; volumes?: string[]; environment?: Record<string, string> }>;
    };
    const { gateway, redis, prometheus } = compose.services;
    expect(gateway?.build).toBe('.');
    expect(gateway?.ports).toContain('8080:8080');
    expect(gateway?.healthcheck?.test?.join(' ')).toContain('/healthz');
    expect(Object.keys(gateway?.environment ?? {})).toEqual(expect.arrayContaining(['TOOLGATE_CONFIG', 'TOOLGATE_DEV_API_KEY']));
    expect(gateway?.volumes).toContain('./examples/config/compose.yaml:/app/examples/config/compose.yaml:ro');
    expect(redis).toBeDefined();
    expect(prometheus?.volumes).toContain('./deploy/prometheus.yml:/etc/prometheus/prometheus.yml:ro');

    const scrape = parseYaml(await readFile(join(root, 'deploy/prometheus.yml'), 'utf8')) as {
      scrape_configs: Array<{ metrics_path?: string; static_configs: Array<{ targets: string[] }> }>;
    };
    // Metrics are on the metrics listener (examples/config/compose.yaml), not on the published API port.
    const job = scrape.scrape_configs.find((config) => config.static_configs.some((s) => s.targets.includes('gateway:9464')));
    expect(job?.metrics_path ?? '/metrics').toBe('/metrics');
    expect(gateway?.ports?.some((port) => port.includes('9464'))).toBe(false);
    const composeConfig = parseYaml(await readFile(join(root, 'examples/config/compose.yaml'), 'utf8')) as { metrics?: { host?: string; port?: number } };
    expect(composeConfig.metrics).toEqual({ host: '0.0.0.0', port: 9464 });
  });
});

describe('Dockerfile', () => {
  it('builds in one stage and runs production dependencies only, as a non-root user, with a HEALTHCHECK', async () => {
    const all = stages(await readFile(join(root, 'Dockerfile'), 'utf8'));
    expect(all.length).toBeGreaterThanOrEqual(2);
    const build = all[0]!;
    const runtime = all.at(-1)!;
    expect(build).toContain('RUN npm run build');
    expect(build.some((line) => /^RUN npm ci\b/.test(line) && !line.includes('--omit=dev'))).toBe(true);
    expect(runtime.some((line) => /^RUN npm ci\b.*--omit=dev/.test(line))).toBe(true);
    expect(runtime.some((line) => /^COPY --from=\S+ \S*dist/.test(line))).toBe(true);
    const users = runtime.filter((line) => /^USER\s/.test(line));
    expect(users.length).toBeGreaterThan(0);
    expect(users.at(-1)).not.toMatch(/^USER\s+(root|0)(:|$)/);
    expect(runtime.some((line) => /^HEALTHCHECK\s.*CMD\s.*\/healthz/.test(line))).toBe(true);
    expect(runtime).toContain('EXPOSE 8080');
    expect(runtime).toContain('CMD ["node", "dist/src/server.js"]');
    // grep needs ripgrep at run time; bubblewrap is the default sandbox where the container allows it.
    expect(runtime.some((line) => /^RUN .*apt-get install\b.*\bripgrep\b.*\bbubblewrap\b/.test(line))).toBe(true);
  });

  it('is given a build context without node_modules, dist or the git history', async () => {
    const ignored = (await readFile(join(root, '.dockerignore'), 'utf8')).split('\n').map((line) => line.trim());
    expect(ignored).toEqual(expect.arrayContaining(['node_modules', 'dist', '.git']));
  });
});

describe('examples/config/compose.yaml', () => {
  const env = {
    TOOLGATE_JWT_SECRET: 'compose-test-secret-that-is-long-enough-0123456789',
    TOOLGATE_API_KEY_SHA256: createHash('sha256').update('tg_compose_test_key').digest('hex'),
    TOOLGATE_REDIS_URL: 'redis://127.0.0.1:6379',
  };

  it('loads with the environment docker-compose.yml provides', async () => {
    const config = await loadConfigFile(join(root, 'examples/config/compose.yaml'), env);
    expect(config.store).toMatchObject({ kind: 'redis', url: env.TOOLGATE_REDIS_URL });
    expect(config.auth.jwt?.secret).toBe(env.TOOLGATE_JWT_SECRET);
    expect(config.functions).toEqual([{ module: join(root, 'examples/functions/demo-tools.mjs') }]);
    expect(Object.keys(config.tenants)).toEqual(['demo']);
  });

  it('names the missing variable when a secret is not in the environment', async () => {
    const { TOOLGATE_JWT_SECRET: _omitted, ...partial } = env;
    await expect(loadConfigFile(join(root, 'examples/config/compose.yaml'), partial)).rejects.toThrow(/TOOLGATE_JWT_SECRET/);
  });
});
