// Packaging: docker-compose.yml passes Debian's `docker-compose config -q` (two replicas behind HAProxy,
// Redis, Prometheus, Grafana), HAProxy's and Prometheus' own checkers accept their configs, the
// Dockerfile keeps its production properties and copies only what exists in the build context, and the
// compose example config loads like any other config file.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import picomatch from 'picomatch';
import { parse as parseYaml } from 'yaml';
import { demoConfig, packageRoot } from '../src/config/demo.js';
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
const haproxyAvailable = await hasBinary('haproxy');
const promtoolAvailable = await hasBinary('promtool');
if (!haproxyAvailable) console.warn('packaging.test: haproxy is not installed; skipping `haproxy -c` (apt-get install -y haproxy)');
if (!promtoolAvailable) console.warn('packaging.test: promtool is not installed; skipping the Prometheus checks (apt-get install -y prometheus)');

/** The environment docker-compose.yml gives the gateways. */
const composeEnv = {
  TOOLGATE_JWT_SECRET: 'compose-test-secret-that-is-long-enough-0123456789',
  TOOLGATE_API_KEY_SHA256: createHash('sha256').update('tg_compose_test_key').digest('hex'),
  TOOLGATE_REDIS_URL: 'redis://127.0.0.1:6379',
};
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

interface ComposeService {
  build?: unknown;
  image?: string;
  healthcheck?: { test?: string[] };
  ports?: string[];
  volumes?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  read_only?: boolean;
  tmpfs?: string[];
  stop_grace_period?: string;
}

async function readCompose(): Promise<{ version?: unknown; services: Record<string, ComposeService> }> {
  return parseYaml(await readFile(join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as { version?: unknown; services: Record<string, ComposeService> };
}

/** The gateway replicas: every service built from this repository. */
function gatewayReplicas(services: Record<string, ComposeService>): Array<[string, ComposeService]> {
  return Object.entries(services).filter(([, service]) => service.build === '.');
}

describe('docker-compose.yml', () => {
  it.skipIf(!composeAvailable)('passes `docker-compose config -q`', async () => {
    const { stderr } = await run('docker-compose', ['-f', join(root, 'docker-compose.yml'), 'config', '-q'], { cwd: root, timeout: 20_000 });
    expect(stderr).toBe('');
  });

  it('follows the Compose specification: no `version:` key, start order gated on health', async () => {
    const compose = await readCompose();
    expect(compose.version).toBeUndefined();
    for (const [name, gateway] of gatewayReplicas(compose.services)) {
      expect(gateway.depends_on?.redis?.condition, name).toBe('service_healthy');
      expect(gateway.healthcheck?.test?.join(' '), name).toContain('/readyz');
    }
    expect(compose.services.redis?.healthcheck?.test).toBeDefined();
  });

  it('runs two gateway replicas with a read-only root behind HAProxy, sharing Redis', async () => {
    const { services } = await readCompose();
    const replicas = gatewayReplicas(services);
    expect(replicas.length).toBeGreaterThanOrEqual(2);
    for (const [name, gateway] of replicas) {
      expect(gateway.ports, `${name} is reached through the load balancer only`).toBeUndefined();
      expect(gateway.read_only, name).toBe(true);
      expect(gateway.tmpfs, name).toContain('/tmp');
      expect(gateway.volumes, name).toContain('./examples/configs/compose.yaml:/app/examples/configs/compose.yaml:ro');
      expect(gateway.volumes?.some((v) => v.endsWith(':/app/workspaces')), name).toBe(true);
      expect(gateway.environment?.TOOLGATE_REDIS_URL, name).toBe('redis://redis:6379');
      expect(Object.keys(gateway.environment ?? {})).toEqual(expect.arrayContaining(['TOOLGATE_CONFIG', 'TOOLGATE_DEV_API_KEY']));
    }
    const lb = services.lb!;
    expect(lb.image).toMatch(/^haproxy:/);
    expect(lb.ports).toContain('8080:8080');
    expect(lb.volumes).toContain('./deploy/haproxy/haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro');
    for (const [name] of replicas) expect(lb.depends_on?.[name]?.condition).toBe('service_healthy');

    // HAProxy balances exactly the compose replicas, health-checks /readyz and retries only what never ran.
    const haproxy = await readFile(join(root, 'deploy/haproxy/haproxy.cfg'), 'utf8');
    const servers = [...haproxy.matchAll(/^\s*server\s+\S+\s+([\w.-]+):8080\b/gm)].map((m) => m[1]);
    expect(servers.sort()).toEqual(replicas.map(([name]) => name).sort());
    expect(haproxy).toMatch(/http-check send meth GET uri \/readyz/);
    expect(haproxy).toMatch(/^\s*retry-on conn-failure 503\s*$/m);
  });

  it.skipIf(!haproxyAvailable)('deploy/haproxy/haproxy.cfg passes `haproxy -c`', async () => {
    const { stdout } = await run('haproxy', ['-c', '-f', join(root, 'deploy/haproxy/haproxy.cfg')], { timeout: 20_000 });
    expect(stdout).toMatch(/Configuration file is valid/);
  });

  it('runs Prometheus scraping every replica with the alert rules, and Grafana with a provisioned datasource', async () => {
    const { services } = await readCompose();
    const replicas = gatewayReplicas(services).map(([name]) => name);
    const prometheus = services.prometheus!;
    expect(prometheus.volumes).toContain('./deploy/prometheus.yml:/etc/prometheus/prometheus.yml:ro');
    expect(prometheus.volumes).toContain('./deploy/prometheus:/etc/prometheus/prometheus:ro');
    const scrape = parseYaml(await readFile(join(root, 'deploy/prometheus.yml'), 'utf8')) as {
      rule_files: string[];
      scrape_configs: Array<{ metrics_path?: string; static_configs: Array<{ targets: string[] }> }>;
    };
    // Metrics are on each replica's metrics listener (examples/configs/compose.yaml), never on a published port.
    const targets = scrape.scrape_configs.flatMap((config) => config.static_configs.flatMap((s) => s.targets));
    expect(targets.sort()).toEqual(replicas.map((name) => `${name}:9464`).sort());
    expect(scrape.scrape_configs.every((config) => (config.metrics_path ?? '/metrics') === '/metrics')).toBe(true);
    const composeConfig = parseYaml(await readFile(join(root, 'examples/configs/compose.yaml'), 'utf8')) as { metrics?: { host?: string; port?: number } };
    expect(composeConfig.metrics).toEqual({ host: '0.0.0.0', port: 9464 });
    expect(scrape.rule_files).toContain('prometheus/rules/*.yml');

    const grafana = services.grafana!;
    expect(grafana.depends_on?.prometheus?.condition).toBe('service_healthy');
    expect(grafana.volumes).toContain('./deploy/grafana/provisioning:/etc/grafana/provisioning:ro');
    const datasources = parseYaml(await readFile(join(root, 'deploy/grafana/provisioning/datasources/prometheus.yml'), 'utf8')) as {
      datasources: Array<{ type: string; url: string }>;
    };
    expect(datasources.datasources).toContainEqual(expect.objectContaining({ type: 'prometheus', url: 'http://prometheus:9090' }));
    const dashboards = parseYaml(await readFile(join(root, 'deploy/grafana/provisioning/dashboards/toolgate.yml'), 'utf8')) as {
      providers: Array<{ options: { path: string } }>;
    };
    const dashboardMount = grafana.volumes?.find((v) => v.startsWith('./deploy/grafana/dashboards:'));
    expect(dashboardMount?.split(':')[1]).toBe(dashboards.providers[0]!.options.path);
  });

  it.skipIf(!promtoolAvailable)('the Prometheus config and alert rules pass promtool, and an alert says when the store is down', async () => {
    // The full check: every rule file the config names resolves (relative to the config, as in the container,
    // where compose mounts deploy/prometheus/ next to it) and passes.
    const checked = await run('promtool', ['check', 'config', join(root, 'deploy/prometheus.yml')], { timeout: 20_000 });
    const ruleFiles = ['deploy/prometheus/alerts.yml', ...(await readdir(join(root, 'deploy/prometheus/rules'))).filter((name) => name.endsWith('.yml')).map((name) => `deploy/prometheus/rules/${name}`)];
    expect(checked.stdout).toContain(`SUCCESS: ${ruleFiles.length} rule files found`);
    expect(checked.stdout.match(/SUCCESS: \d+ rules found/g)).toHaveLength(ruleFiles.length);
    const mounts = Object.fromEntries((await readCompose()).services.prometheus!.volumes!.map((volume) => volume.split(':').slice(0, 2).reverse()));
    for (const file of ruleFiles) {
      const inContainer = join('/etc/prometheus', relative(join(root, 'deploy'), join(root, file)));
      const mount = Object.keys(mounts).find((target) => inContainer === target || inContainer.startsWith(`${target}/`));
      expect(mount, `${file} is mounted at ${inContainer}`).toBeDefined();
      expect(join(root, mounts[mount!]!, inContainer.slice(mount!.length))).toBe(join(root, file));
    }
    const { stdout } = await run('promtool', ['check', 'rules', join(root, 'deploy/prometheus/rules/store.yml')], { timeout: 20_000 });
    expect(stdout).toMatch(/SUCCESS/);
    const rules = parseYaml(await readFile(join(root, 'deploy/prometheus/rules/store.yml'), 'utf8')) as {
      groups: Array<{ rules: Array<{ alert: string; expr: string }> }>;
    };
    const down = rules.groups.flatMap((g) => g.rules).find((r) => r.alert === 'ToolgateStoreDown');
    expect(down?.expr).toContain('toolgate_store_up');
    // The alert fires after the store has been down for its `for` period, and stops when it is back.
    const tested = await run('promtool', ['test', 'rules', join(root, 'deploy/prometheus/tests/store.test.yml')], { timeout: 20_000 });
    expect(tested.stdout).toMatch(/SUCCESS/);
  });
});

/** Whether .dockerignore keeps `path` out of the build context (its patterns, with `!` exceptions). */
function dockerignored(path: string, patterns: string[]): boolean {
  let ignored = false;
  for (const raw of patterns) {
    const negated = raw.startsWith('!');
    const pattern = (negated ? raw.slice(1) : raw).replace(/^\/+|\/+$/g, '');
    const matcher = picomatch(pattern, { dot: true });
    const segments = path.split('/');
    // A pattern naming a folder keeps everything below it out too.
    const hit = segments.some((_, i) => matcher(segments.slice(0, i + 1).join('/')));
    if (hit) ignored = !negated;
  }
  return ignored;
}

describe('Dockerfile', () => {
  it('builds in one stage and runs production dependencies only, as a non-root user under an init, with a HEALTHCHECK', async () => {
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
    expect(runtime).toContain('EXPOSE 8080 9464');
    expect(runtime).toContain('ENTRYPOINT ["/usr/bin/tini", "--"]');
    expect(runtime).toContain('CMD ["node", "dist/src/server.js"]');
    // grep needs ripgrep at run time; bubblewrap is the default sandbox where the container allows it.
    expect(runtime.some((line) => /^RUN .*apt-get install\b.*\bripgrep\b.*\bbubblewrap\b/.test(line))).toBe(true);
  });

  it('runs Node 24 LTS with tini, bubblewrap and ripgrep from Debian, while package.json keeps Node 20.18 working', async () => {
    const all = stages(await readFile(join(root, 'Dockerfile'), 'utf8'));
    for (const stage of all) expect(stage[0]).toMatch(/^FROM node:24-bookworm-slim\b/);
    const install = all.at(-1)!.find((line) => /^RUN apt-get update\b/.test(line)) ?? '';
    for (const pkg of ['tini', 'bubblewrap', 'ripgrep']) expect(install.split(/\s+/)).toContain(pkg);
    const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { engines: { node: string } };
    expect(pkg.engines.node).toBe('>=20.18');
  });

  it('copies only sources that exist in the build context, and the demo files rather than all of examples/', async () => {
    const all = stages(await readFile(join(root, 'Dockerfile'), 'utf8'));
    const ignore = (await readFile(join(root, '.dockerignore'), 'utf8')).split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
    const sources: string[] = [];
    for (const line of all.flat()) {
      const match = /^COPY\s+(?!--from)(.*)$/i.exec(line);
      if (!match) continue;
      const words = match[1]!.split(/\s+/).filter((w) => !w.startsWith('--'));
      sources.push(...words.slice(0, -1));
    }
    expect(sources.length).toBeGreaterThan(0);
    for (const source of sources) {
      if (source === '.') continue;
      expect(existsSync(join(root, source)), `${source} exists`).toBe(true);
      expect(dockerignored(source, ignore), `${source} is not in .dockerignore`).toBe(false);
    }
    expect(sources).not.toContain('examples');
    expect(sources).not.toContain('examples/');
    // Every file the embedded demo reads is copied.
    const demo = demoConfig({ TOOLGATE_DEV_API_KEY: 'tg_packaging_test' }).config;
    const needed = [
      ...demo.functions.map((f) => ('module' in f ? f.module : undefined)),
      ...demo.rag.map((r) => (r.backend.kind === 'embedded' ? r.backend.documents : undefined)),
      ...demo.mcp.local.map((m) => ('module' in m ? m.module : undefined)),
    ]
      .filter((p): p is string => typeof p === 'string')
      .map((p) => relative(root, p));
    expect(needed.length).toBeGreaterThan(0);
    for (const file of needed) expect(sources, file).toContain(file);
    // The check itself: an ignored path is reported as ignored.
    expect(dockerignored('test/packaging.test.ts', ignore)).toBe(true);
  });

  it('declares every path the process writes as a volume (read-only root friendly)', async () => {
    const runtime = stages(await readFile(join(root, 'Dockerfile'), 'utf8')).at(-1)!;
    const volumes = runtime.filter((line) => /^VOLUME\s/.test(line)).flatMap((line) => JSON.parse(line.replace(/^VOLUME\s+/, '')) as string[]);
    expect(volumes).toEqual(expect.arrayContaining(['/app/workspaces', '/tmp']));
    const config = await loadConfigFile(join(root, 'examples/configs/compose.yaml'), composeEnv);
    expect(volumes).toContain(config.builtins.workspaceRoot.replace(root, '/app'));
  });

  it('is given a build context without node_modules, dist or the git history', async () => {
    const ignored = (await readFile(join(root, '.dockerignore'), 'utf8')).split('\n').map((line) => line.trim());
    expect(ignored).toEqual(expect.arrayContaining(['node_modules', 'dist', '.git']));
  });
});

describe('examples/configs/compose.yaml', () => {
  const env = composeEnv;

  it('loads with the environment docker-compose.yml provides', async () => {
    const config = await loadConfigFile(join(root, 'examples/configs/compose.yaml'), env);
    expect(config.store).toMatchObject({ kind: 'redis', url: env.TOOLGATE_REDIS_URL });
    expect(config.auth.jwt?.secret).toBe(env.TOOLGATE_JWT_SECRET);
    expect(config.functions).toEqual([{ module: join(root, 'examples/functions/demo-tools.mjs') }]);
    expect(Object.keys(config.tenants)).toEqual(['demo']);
    expect(config.console.enabled).toBe(true);
  });

  it('names the missing variable when a secret is not in the environment', async () => {
    const { TOOLGATE_JWT_SECRET: _omitted, ...partial } = env;
    await expect(loadConfigFile(join(root, 'examples/configs/compose.yaml'), partial)).rejects.toThrow(/TOOLGATE_JWT_SECRET/);
  });
});
