// What a new operator copies from docs/operations.md matches the deploy files: the image the build command
// tags is the one the Kubernetes base deploys; compose turns the console on and its credentials are named
// in the README and the docs; the ServiceMonitor's CRD requirement is documented, with an overlay without it.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { packageRoot } from '../../src/config/demo.js';
import { apiKeyDigest } from '../../src/shared/api-key-digest.js';
import { findBinary } from '../helpers/binary.js';
import { docBlock } from '../helpers/doc-blocks.js';

const root = packageRoot();
const read = (file: string) => readFileSync(join(root, file), 'utf8');
const kubectl = await findBinary('kubectl');

describe('the deploy files as documented', () => {
  it('the documented build command tags the image the Kubernetes base deploys, with the package version', () => {
    const tag = /docker build -t (\S+) \./.exec(docBlock('docs/operations.md', 'image-build'))?.[1];
    const { images } = parseYaml(read('deploy/k8s/base/kustomization.yaml')) as { images: Array<{ name: string; newName: string; newTag: string }> };
    const deployment = parseYaml(read('deploy/k8s/base/deployment.yaml')) as { spec: { template: { spec: { containers: Array<{ image: string }> } } } };
    const image = images.find((entry) => entry.name === deployment.spec.template.spec.containers[0]!.image);
    expect(image, 'the Deployment image has an images: entry').toBeDefined();
    const version = (JSON.parse(read('package.json')) as { version: string }).version;
    expect(tag).toBe(`${image!.newName}:${image!.newTag}`);
    expect(image!.newTag).toBe(version);
    expect(docBlock('docs/operations.md', 'image-build')).toContain(`toolgate:${version}\n`);
  });

  it("compose's API key and Grafana's credentials are named in the README and docs/operations.md, and match docker-compose.yml", () => {
    const compose = read('docker-compose.yml');
    const digest = /TOOLGATE_API_KEY_SHA256:-([0-9a-f]{64})/.exec(compose)?.[1];
    expect(digest).toBe(apiKeyDigest('tg_compose_dev_key'));
    expect(compose).toMatch(/GF_SECURITY_ADMIN_PASSWORD: \$\{GRAFANA_ADMIN_PASSWORD:-admin\}/);
    for (const file of ['README.md', 'docs/operations.md']) {
      const text = read(file);
      expect(text, file).toContain('tg_compose_dev_key');
      expect(text, file).toContain('GRAFANA_ADMIN_PASSWORD');
    }
  });

  it('documents that the ServiceMonitor needs the Prometheus operator CRDs, and the overlay without it renders no ServiceMonitor', async () => {
    expect(read('docs/operations.md')).toMatch(/ServiceMonitor[\s\S]{0,400}CustomResourceDefinitions[\s\S]{0,300}overlays\/no-servicemonitor/);
    expect(read('deploy/k8s/base/kustomization.yaml')).toContain('needs the Prometheus operator');
    if (!kubectl) return;
    const render = async (path: string) =>
      parseAllDocuments((await promisify(execFile)(kubectl, ['kustomize', join(root, path)], { timeout: 30_000 })).stdout).map((doc) => (doc.toJSON() as { kind: string }).kind);
    const [base, without] = await Promise.all([render('deploy/k8s/base'), render('deploy/k8s/overlays/no-servicemonitor')]);
    expect(base).toContain('ServiceMonitor');
    expect(without).not.toContain('ServiceMonitor');
    expect(without.sort()).toEqual(base.filter((kind) => kind !== 'ServiceMonitor').sort());
  });
});
