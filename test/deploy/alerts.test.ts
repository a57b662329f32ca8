// deploy/prometheus/alerts.yml: valid for promtool, and every alert fires exactly when its unit test says
// (deploy/prometheus/alerts.test.yml). Debian's `prometheus` package ships promtool (.ci/run installs it).
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { packageRoot } from '../../src/config/demo.js';
import { findBinary } from '../helpers/binary.js';
import { docBlock } from '../helpers/doc-blocks.js';

const run = promisify(execFile);
const folder = join(packageRoot(), 'deploy/prometheus');
const promtool = await findBinary('promtool');
if (!promtool) console.warn('alerts.test: promtool is not installed; skipping the alert rule checks (apt-get install -y prometheus)');

interface RuleFile {
  groups: Array<{ rules: Array<{ alert?: string; annotations?: Record<string, string> }> }>;
}

describe('deploy/prometheus/alerts.yml', () => {
  it.skipIf(!promtool)('passes promtool check rules', async () => {
    const { stdout } = await run(promtool!, ['check', 'rules', join(folder, 'alerts.yml')], { timeout: 20_000 });
    expect(stdout).toMatch(/SUCCESS: \d+ rules found/);
  });

  it.skipIf(!promtool)('passes its promtool unit tests (alerts.test.yml), which cover every alert', async () => {
    const { stdout } = await run(promtool!, ['test', 'rules', 'alerts.test.yml'], { cwd: folder, timeout: 30_000 });
    expect(stdout).toContain('SUCCESS');
    const rules = parseYaml(await readFile(join(folder, 'alerts.yml'), 'utf8')) as RuleFile;
    const alerts = rules.groups.flatMap((group) => group.rules.map((rule) => rule.alert));
    const tests = parseYaml(await readFile(join(folder, 'alerts.test.yml'), 'utf8')) as { tests: Array<{ alert_rule_test: Array<{ alertname: string; exp_alerts: unknown[] }> }> };
    const fired = new Set(tests.tests.flatMap((test) => test.alert_rule_test.filter((check) => check.exp_alerts.length > 0).map((check) => check.alertname)));
    expect([...fired].sort()).toEqual([...alerts].sort());
  });

  it.skipIf(!promtool)('the promtool commands of docs/operations.md run as written', async () => {
    const block = docBlock('docs/operations.md', 'alert-rule-checks');
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', block], { cwd: packageRoot(), timeout: 30_000 });
    expect(stdout.match(/SUCCESS/g)).toHaveLength(2);
  });

  it('are loaded by the compose Prometheus', async () => {
    const compose = parseYaml(await readFile(join(packageRoot(), 'docker-compose.yml'), 'utf8')) as { services: Record<string, { volumes?: string[] }> };
    expect(compose.services.prometheus?.volumes).toContain('./deploy/prometheus:/etc/prometheus/prometheus:ro');
    const prometheusConfig = parseYaml(await readFile(join(packageRoot(), 'deploy/prometheus.yml'), 'utf8')) as { rule_files: string[] };
    expect(prometheusConfig.rule_files).toContain('prometheus/alerts.yml');
  });

  it('gives every alert a summary, a description and a runbook', async () => {
    const rules = parseYaml(await readFile(join(folder, 'alerts.yml'), 'utf8')) as RuleFile;
    for (const rule of rules.groups.flatMap((group) => group.rules)) {
      expect(Object.keys(rule.annotations ?? {}).sort(), rule.alert).toEqual(['description', 'runbook', 'summary']);
    }
  });
});
