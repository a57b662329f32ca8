// Kubernetes manifests: `kubectl kustomize` renders the base and the dev overlay offline, every object
// validates against the schema of a pinned Kubernetes API (kubernetes-models 5.1.0, generated from the
// Kubernetes OpenAPI document; the ServiceMonitor against the prometheus-operator CRD schema of
// @kubernetes-models/prometheus-operator 6.0.0), and the properties production depends on hold.
// Those schemas check types, required fields, enums and formats; they do not flag unknown fields,
// so the properties below are also asserted by name.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Service } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import type { IContainer } from 'kubernetes-models/v1/Container';
import { packageRoot } from '../src/config/demo.js';
import { loadConfigFile } from '../src/config/load.js';

const run = promisify(execFile);
const root = packageRoot();

const kubectlAvailable = await run('kubectl', ['version', '--client'], { timeout: 20_000 }).then(
  () => true,
  () => false,
);
if (!kubectlAvailable) console.warn('k8s.test: kubectl is not installed; skipping the kustomize render and schema checks of deploy/k8s');

interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

/** The schema-checked model class for each kind the manifests may hold; any other kind fails the test. */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'apps/v1/Deployment': Deployment,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'v1/ConfigMap': ConfigMap,
  'v1/Service': Service,
  'v1/ServiceAccount': ServiceAccount,
  'monitoring.coreos.com/v1/ServiceMonitor': ServiceMonitor,
};

/** Throws with the schema's message when the object does not validate. */
function validateObject(object: KubeObject): void {
  const Model = MODELS[`${object.apiVersion}/${object.kind}`];
  if (!Model) throw new Error(`no pinned schema for ${object.apiVersion} ${object.kind}`);
  new Model(object as never).validate();
}

async function render(dir: string): Promise<KubeObject[]> {
  const { stdout } = await run('kubectl', ['kustomize', join(root, dir)], { timeout: 30_000, maxBuffer: 8 * 1024 * 1024 });
  return parseAllDocuments(stdout).map((doc) => doc.toJSON() as KubeObject);
}

/** The one object of that kind and name; `Spec` is the shape the caller reads from its spec. */
function one<Spec = unknown>(objects: KubeObject[], kind: string, name = 'toolgate'): KubeObject & { spec: Spec } {
  const found = objects.filter((o) => o.kind === kind && o.metadata.name === name);
  expect(found, `${kind}/${name}`).toHaveLength(1);
  return found[0] as KubeObject & { spec: Spec };
}

interface DeploymentSpec {
  selector: { matchLabels: Record<string, string> };
  template: {
    metadata: { labels: Record<string, string> };
    spec: {
      terminationGracePeriodSeconds: number;
      securityContext: { runAsNonRoot?: boolean; seccompProfile?: { type: string } };
      containers: IContainer[];
      volumes: Array<{ name: string; configMap?: { name: string }; emptyDir?: object }>;
    };
  };
}

describe.skipIf(!kubectlAvailable)('deploy/k8s (kustomize base)', async () => {
  const objects = kubectlAvailable ? await render('deploy/k8s') : [];

  it('renders only kinds with a pinned schema, and every object validates against it', () => {
    expect(objects.length).toBeGreaterThanOrEqual(8);
    for (const object of objects) expect(() => validateObject(object), `${object.kind}/${object.metadata.name}`).not.toThrow();
  });

  it('the schema check rejects a broken object (so the test above can fail)', () => {
    const deployment = structuredClone(one<DeploymentSpec>(objects, 'Deployment'));
    const container = deployment.spec.template.spec.containers[0]!;
    container.readinessProbe = { httpGet: { path: '/readyz' } } as never; // port missing
    expect(() => validateObject(deployment)).toThrow(/port/);
    expect(() => validateObject({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'x' } })).toThrow(/no pinned schema/);
  });

  it('has a Deployment with probes, drain timing, resources and a locked-down security context', async () => {
    const deployment = one<DeploymentSpec>(objects, 'Deployment');
    const pod = deployment.spec.template.spec;
    const container = pod.containers.find((c) => c.name === 'toolgate')!;
    expect(container.readinessProbe?.httpGet?.path).toBe('/readyz');
    expect(container.livenessProbe?.httpGet?.path).toBe('/healthz');
    expect(container.startupProbe?.httpGet).toBeDefined();
    expect(container.resources?.requests).toMatchObject({ cpu: expect.any(String), memory: expect.any(String) });
    expect(container.resources?.limits).toMatchObject({ cpu: expect.any(String), memory: expect.any(String) });
    expect(container.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    expect(pod.securityContext.runAsNonRoot).toBe(true);
    expect(pod.securityContext.seccompProfile?.type).toBe('RuntimeDefault');

    // The pod is killed only after the preStop pause and toolgate's own grace delay are over.
    const preStopSeconds = container.lifecycle?.preStop?.sleep?.seconds ?? 0;
    expect(preStopSeconds).toBeGreaterThan(0);
    const config = await configMapConfig(objects);
    expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(preStopSeconds * 1000 + config.server.shutdownGraceMs);

    // Secrets only by reference: every secret-looking variable comes from a Secret, none is a literal.
    for (const variable of container.env ?? []) {
      if (/SECRET|KEY|REDIS_URL|TOKEN|PASSWORD/.test(variable.name)) {
        expect(variable.value, variable.name).toBeUndefined();
        expect(variable.valueFrom?.secretKeyRef?.name, variable.name).toBeTruthy();
      }
    }
    expect(objects.some((o) => o.kind === 'Secret')).toBe(false);

    // Read-only root: every path toolgate writes is a mounted volume.
    const mounts = new Set((container.volumeMounts ?? []).map((m) => m.mountPath));
    expect(mounts).toContain(config.builtins.workspaceRoot);
    expect(mounts).toContain('/tmp');
    const configMount = container.volumeMounts?.find((m) => m.name === pod.volumes.find((v) => v.configMap)?.name);
    expect(container.env?.find((v) => v.name === 'TOOLGATE_CONFIG')?.value).toBe(`${configMount?.mountPath}/toolgate.yaml`);
  });

  it('has a Service, PDB, HPA, NetworkPolicy and ServiceMonitor that all select the Deployment', () => {
    const deployment = one<DeploymentSpec>(objects, 'Deployment');
    const podLabels = deployment.spec.template.metadata.labels;
    const selects = (selector: Record<string, string> | undefined): boolean =>
      selector !== undefined && Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => podLabels[k] === v);
    expect(selects(deployment.spec.selector.matchLabels)).toBe(true);

    const service = one<{ selector: Record<string, string>; ports: Array<{ name: string; targetPort: string }> }>(objects, 'Service').spec;
    expect(selects(service.selector)).toBe(true);
    const containerPorts = new Set(deployment.spec.template.spec.containers[0]!.ports!.map((p) => p.name));
    for (const port of service.ports) expect(containerPorts).toContain(port.targetPort);

    const pdb = one<{ minAvailable?: number; selector: { matchLabels: Record<string, string> } }>(objects, 'PodDisruptionBudget').spec;
    expect(selects(pdb.selector.matchLabels)).toBe(true);
    expect(pdb.minAvailable).toBeGreaterThanOrEqual(1);

    const hpa = one<{ scaleTargetRef: { kind: string; name: string }; minReplicas: number; maxReplicas: number }>(objects, 'HorizontalPodAutoscaler').spec;
    expect(hpa.scaleTargetRef).toMatchObject({ kind: 'Deployment', name: 'toolgate' });
    expect(hpa.minReplicas).toBeGreaterThanOrEqual(2);
    expect(hpa.maxReplicas).toBeGreaterThan(hpa.minReplicas);

    const policy = one<{ podSelector: { matchLabels: Record<string, string> }; policyTypes: string[] }>(objects, 'NetworkPolicy').spec;
    expect(selects(policy.podSelector.matchLabels)).toBe(true);
    expect(policy.policyTypes).toEqual(expect.arrayContaining(['Ingress', 'Egress']));

    const monitor = one<{ selector: { matchLabels: Record<string, string> }; endpoints: Array<{ port: string; path: string }> }>(objects, 'ServiceMonitor').spec;
    const serviceLabels = one(objects, 'Service').metadata.labels ?? {};
    expect(Object.entries(monitor.selector.matchLabels).every(([k, v]) => serviceLabels[k] === v)).toBe(true);
    expect(monitor.endpoints.map((e) => e.port)).toEqual(['metrics']);
    expect(service.ports.map((p) => p.name)).toContain('metrics');
    expect(monitor.endpoints[0]!.path).toBe('/metrics');
  });

  it("the ConfigMap's toolgate.yaml loads with the Secret's variables and uses the shared Redis store", async () => {
    const config = await configMapConfig(objects);
    expect(config.store).toMatchObject({ kind: 'redis', url: 'redis://redis:6379' });
    // Metrics on their own listener, on the port the Service and ServiceMonitor name `metrics`.
    const deployment = one<DeploymentSpec>(objects, 'Deployment');
    const metricsPort = deployment.spec.template.spec.containers[0]!.ports!.find((p) => p.name === 'metrics')?.containerPort;
    expect(config.metrics).toMatchObject({ host: '0.0.0.0', port: metricsPort });
  });
});

describe.skipIf(!kubectlAvailable)('deploy/k8s/overlays/dev', async () => {
  const objects = kubectlAvailable ? await render('deploy/k8s/overlays/dev') : [];

  it('renders the base plus one Redis, every object valid and in the dev namespace', () => {
    for (const object of objects) expect(() => validateObject(object), `${object.kind}/${object.metadata.name}`).not.toThrow();
    expect(objects.every((o) => o.metadata.namespace === 'toolgate-dev')).toBe(true);
    one(objects, 'Deployment', 'toolgate');
    const redis = one<{ replicas: number }>(objects, 'Deployment', 'redis').spec;
    expect(redis.replicas).toBe(1);
    one(objects, 'Service', 'redis');
    one(objects, 'NetworkPolicy', 'redis');
  });
});

async function configMapConfig(objects: KubeObject[]): Promise<Awaited<ReturnType<typeof loadConfigFile>>> {
  const data = one(objects, 'ConfigMap', 'toolgate-config').data as Record<string, string>;
  expect(parseYaml(data['toolgate.yaml']!)).toBeTypeOf('object');
  const dir = await mkdtemp(join(tmpdir(), 'toolgate-k8s-'));
  try {
    const file = join(dir, 'toolgate.yaml');
    await writeFile(file, data['toolgate.yaml']!);
    return await loadConfigFile(file, {
      TOOLGATE_JWT_SECRET: 'k8s-test-secret-that-is-long-enough-0123456789',
      TOOLGATE_API_KEY_SHA256: 'a'.repeat(64),
      TOOLGATE_REDIS_URL: 'redis://redis:6379',
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
