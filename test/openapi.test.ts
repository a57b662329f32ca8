// openapi.yaml is generated from the route schemas; this test fails on drift and checks the document.
import { readFile } from 'node:fs/promises';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { buildOpenapiApp, GENERATOR_API_KEY, generateOpenapiYaml, OPENAPI_PATH } from '../scripts/openapi.js';

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
