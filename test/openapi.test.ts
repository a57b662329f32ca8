// openapi.yaml is generated from the route schemas; this test fails on drift and checks the document.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { CONSOLE_API_TYPES_PATH, generateConsoleApiTypes } from '../scripts/console-api-types.js';
import { buildOpenapiApp, GENERATOR_API_KEY, generateOpenapiYaml, OPENAPI_PATH } from '../scripts/openapi.js';
import { packageRoot } from '../src/config/demo.js';

const run = promisify(execFile);
const root = packageRoot();
// Every child below runs with this preload: a connection to anything but loopback is refused and reported.
const DENY_NETWORK = join(root, 'test/fixtures/deny-network.mjs');

interface LintReport {
  totals: { errors: number; warnings: number; ignored: number };
  problems: Array<{ ruleId: string; message: string }>;
}

/** `redocly lint` as a user runs it from the repository root (redocly.yaml, .redocly.lint-ignore.yaml), offline. */
async function redoclyLint(): Promise<{ report: LintReport; stderr: string }> {
  const cli = join(root, 'node_modules/@redocly/cli/bin/cli.js');
  const { stdout, stderr } = await run(process.execPath, ['--import', DENY_NETWORK, cli, 'lint', 'openapi.yaml', '--format=json'], {
    cwd: root,
    env: { ...process.env, NO_COLOR: '1' },
    timeout: 60_000,
  }).catch((error: { stdout?: string; stderr?: string }) => ({ stdout: error.stdout ?? '', stderr: error.stderr ?? '' }));
  return { report: JSON.parse(stdout) as LintReport, stderr };
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

interface Operation {
  tags?: string[];
  summary?: string;
  responses?: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }>;
}

function operations(document: { paths?: Record<string, Record<string, unknown>> }): Array<{ where: string; operation: Operation }> {
  const found: Array<{ where: string; operation: Operation }> = [];
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const method of METHODS) {
      if (item[method]) found.push({ where: `${method.toUpperCase()} ${path}`, operation: item[method] as Operation });
    }
  }
  return found;
}

describe('the OpenAPI document', () => {
  let app: FastifyInstance;
  let committed: string;
  let generated: string;

  beforeAll(async () => {
    committed = await readFile(OPENAPI_PATH, 'utf8').catch(() => '');
    generated = await generateOpenapiYaml();
    app = await buildOpenapiApp();
  });
  afterAll(async () => {
    await app?.close();
  });

  it('committed openapi.yaml matches what the routes generate', () => {
    const hint = 'openapi.yaml is out of date with the route schemas: run `npm run openapi` and commit the result';
    expect(committed, hint).not.toBe('');
    expect(committed === generated, hint).toBe(true);
  });

  it("committed console API types match what openapi.yaml generates", async () => {
    const hint = 'console/src/generated/openapi.ts is out of date with openapi.yaml: run `npm run openapi` and commit the result';
    const types = await readFile(CONSOLE_API_TYPES_PATH, 'utf8').catch(() => '');
    expect(types, hint).not.toBe('');
    expect(types === (await generateConsoleApiTypes()), hint).toBe(true);
  });

  it('is generated deterministically (two builds give the same bytes)', async () => {
    expect(await generateOpenapiYaml()).toBe(generated);
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(parseYaml(generated) as Record<string, unknown>);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('passes `redocly lint` (recommended rules) with no error and no warning, without touching the network', async () => {
    const { report, stderr } = await redoclyLint();
    expect(report.problems.map(({ ruleId, message }) => `${ruleId}: ${message}`)).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    // The only exceptions are the two unauthenticated probes, listed with their reason in .redocly.lint-ignore.yaml.
    expect(report.totals.ignored).toBeLessThanOrEqual(2);
    expect(stderr).not.toContain('deny-network');
  });

  it('the network guard the lint runs under does refuse and report a connection that leaves loopback', async () => {
    const { stderr } = await run(process.execPath, ['--import', DENY_NETWORK, '-e', "fetch('http://192.0.2.1/').catch(() => undefined)"], { timeout: 10_000 });
    expect(stderr).toContain('deny-network: 192.0.2.1');
  });

  it('declares on every path exactly the parameters its template names, and an operationId on every operation', () => {
    const document = parseYaml(generated) as { paths: Record<string, Record<string, { operationId?: string; parameters?: Array<{ in: string; name: string }> }>> };
    const wrong: string[] = [];
    for (const [path, item] of Object.entries(document.paths)) {
      const named = [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]).sort();
      for (const [method, operation] of Object.entries(item)) {
        const declared = (operation.parameters ?? []).filter((parameter) => parameter.in === 'path').map((parameter) => parameter.name).sort();
        if (JSON.stringify(declared) !== JSON.stringify(named)) wrong.push(`${method.toUpperCase()} ${path}: ${declared.join(',')}`);
        if (!operation.operationId) wrong.push(`${method.toUpperCase()} ${path}: no operationId`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('documents the MCP session operations: POST, GET (the event stream) and DELETE on /mcp and /mcp/{toolset}', () => {
    const document = parseYaml(generated) as { paths: Record<string, Record<string, { description?: string; responses: Record<string, { content?: Record<string, unknown> }> }>> };
    for (const path of ['/mcp', '/mcp/{toolset}']) {
      expect(Object.keys(document.paths[path]!).sort()).toEqual(['delete', 'get', 'post']);
      expect(document.paths[path]!.post!.description).toContain('Mcp-Session-Id');
      expect(Object.keys(document.paths[path]!.get!.responses['200']!.content ?? {})).toEqual(['text/event-stream']);
    }
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) expect(Object.keys(operation.responses).some((status) => /^2/.test(status)), `${method} ${path}`).toBe(true);
    }
  });

  it('leaves the probes and the OAuth metadata open (security: []) and asks for a bearer token everywhere else', () => {
    const document = parseYaml(generated) as { paths: Record<string, Record<string, { security?: unknown[] }>> };
    const open = Object.entries(document.paths).flatMap(([path, item]) => Object.entries(item).filter(([, op]) => op.security?.length === 0).map(([m]) => `${m} ${path}`));
    expect(open.sort()).toEqual([
      'get /.well-known/oauth-protected-resource',
      'get /.well-known/oauth-protected-resource/mcp',
      'get /.well-known/oauth-protected-resource/mcp/{toolset}',
      'get /healthz',
      'get /oauth/callback',
      'get /oauth/client-metadata.json',
      'get /readyz',
    ]);
    const unsecured = Object.entries(document.paths).flatMap(([path, item]) => Object.entries(item).filter(([, op]) => op.security === undefined).map(([m]) => `${m} ${path}`));
    expect(unsecured).toEqual([]);
  });

  it('GET /openapi.json serves the same document', async () => {
    const response = await app.inject({ method: 'GET', url: '/openapi.json', headers: { authorization: `Bearer ${GENERATOR_API_KEY}` } });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual(parseYaml(generated));
  });

  it('gives every operation tags and a summary', () => {
    const document = parseYaml(generated) as Parameters<typeof operations>[0];
    const ops = operations(document);
    expect(ops.length).toBeGreaterThan(0);
    const missing = ops.filter(({ operation }) => !operation.tags?.length || !operation.summary).map(({ where }) => where);
    expect(missing).toEqual([]);
  });

  it('describes every 4xx response with ErrorBody (429 on a tool call is a ToolResult by contract)', () => {
    const document = parseYaml(generated) as Parameters<typeof operations>[0];
    const wrong: string[] = [];
    for (const { where, operation } of operations(document)) {
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        if (!/^4\d\d$/.test(status)) continue;
        const refs = Object.values(response.content ?? {}).map((media) => media.schema?.$ref);
        const allowed = status === '429' ? ['#/components/schemas/ErrorBody', '#/components/schemas/ToolResult'] : ['#/components/schemas/ErrorBody'];
        if (refs.length === 0 || refs.some((ref) => !ref || !allowed.includes(ref))) wrong.push(`${where} ${status}: ${JSON.stringify(refs)}`);
      }
    }
    expect(wrong).toEqual([]);
  });
});
