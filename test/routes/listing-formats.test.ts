import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { packageRoot } from '../../src/config/demo.js';
import { bearer, buildTestApp, signToken, testConfig } from '../helpers/build.js';

let app: FastifyInstance;
let token: string;
let dir: string;
beforeAll(async () => {
  app = await buildTestApp(
    testConfig({
      functions: [{ module: './test/fixtures/functions/basic.mjs' }, { module: './test/fixtures/functions/schemas.mjs' }],
      tools: { slow: { deferLoading: true } },
    }),
  );
  token = await signToken();
  // Under node_modules, so that the SDK packages resolve from the generated type-check file.
  await mkdir(join(packageRoot(), 'node_modules/.cache'), { recursive: true });
  dir = await mkdtemp(join(packageRoot(), 'node_modules/.cache/listing-types-'));
});
afterAll(async () => {
  await app.close();
  await rm(dir, { recursive: true, force: true });
});

const list = (query: string, headers: Record<string, string> = {}) => app.inject({ method: 'GET', url: `/v1/tools${query}`, headers: { ...bearer(token), ...headers } });
type Named = { name: string };
const byName = <T extends Named>(items: T[], name: string): T | undefined => items.find((item) => item.name === name);

describe('GET /v1/tools?format=openai-responses', () => {
  it('lists flat Responses API function tools, strict false unless asked', async () => {
    const tools = (await list('?format=openai-responses')).json();
    expect(byName(tools, 'get_weather')).toEqual({
      type: 'function', name: 'get_weather', description: 'Weather for a city', strict: false,
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
    });
    expect(byName(tools, 'slow')).toMatchObject({ strict: false, parameters: { type: 'object', properties: {} } });
  });
});

describe('strict=true', () => {
  it('makes every property required, optional ones nullable, every object closed, and drops keywords strict mode lacks', async () => {
    const tools = (await list('?format=openai-responses&strict=true')).json();
    expect(byName(tools, 'book_room')).toEqual({
      type: 'function', name: 'book_room', description: 'Book a room', strict: true,
      parameters: {
        type: 'object',
        properties: {
          room: { type: 'string', description: 'Room id' },
          size: { type: ['string', 'null'], enum: ['small', 'large', null] },
          when: { type: ['string', 'null'], format: 'date-time' },
          site: { type: ['string', 'null'] },
          guests: {
            type: ['array', 'null'], maxItems: 8,
            items: { type: 'object', properties: { name: { type: 'string' }, age: { type: ['integer', 'null'], minimum: 0 } }, required: ['name', 'age'], additionalProperties: false },
          },
          note: { type: ['string', 'null'] },
        },
        required: ['room', 'size', 'when', 'site', 'guests', 'note'],
        additionalProperties: false,
      },
    });
    expect(byName(tools, 'with_refs')).toMatchObject({
      strict: true,
      parameters: {
        $defs: { point: { type: 'object', properties: { x: { type: 'number' }, y: { type: 'number' } }, required: ['x', 'y'], additionalProperties: false } },
        properties: { from: { $ref: '#/$defs/point' }, to: { anyOf: [{ $ref: '#/$defs/point' }, { type: 'null' }] }, id: { type: ['string', 'integer', 'null'] } },
        required: ['from', 'to', 'id'],
      },
    });
    expect(byName(tools, 'no_args')).toMatchObject({ strict: true, parameters: { type: 'object', properties: {}, required: [], additionalProperties: false } });
  });

  it('leaves a tool non-strict, with its own schema, when strict mode cannot express it', async () => {
    const tools = (await list('?format=openai&strict=true')).json() as { function: Named & { strict?: boolean; parameters: unknown } }[];
    const fn = (name: string) => tools.find((tool) => tool.function.name === name)?.function;
    expect(fn('open_map')).toMatchObject({ strict: false, parameters: { additionalProperties: { type: 'string' } } });
    expect(fn('picky')).toMatchObject({ strict: false, parameters: { properties: { value: { oneOf: [{ type: 'string' }, { type: 'number' }] } } } });
    expect(fn('get_weather')?.strict).toBe(true);
    // Without strict=true the Chat Completions shape is unchanged (no strict key).
    const plain = (await list('?format=openai')).json() as { function: Record<string, unknown> }[];
    expect(plain.every((tool) => !('strict' in tool.function))).toBe(true);
  });

  it('accepts the null a strict-mode model sends for an optional argument', async () => {
    const res = await app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(token), payload: { name: 'book_room', arguments: { room: 'b2', size: null, when: null, site: null, guests: [{ name: 'ana', age: null }], note: null } } });
    expect(res.json()).toMatchObject({ ok: true });
    expect(JSON.parse(res.json().output)).toEqual({ room: 'b2', guests: [{ name: 'ana' }], note: null });
    // A null the schema cannot take for a required property is still refused.
    const refused = await app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(token), payload: { name: 'book_room', arguments: { room: null } } });
    expect(refused.json()).toMatchObject({ ok: false, error: { errorType: 'VALIDATION_ERROR' } });
  });

  it('applies to the OpenAI formats only', async () => {
    const res = await list('?format=anthropic&strict=true');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'TG_BAD_REQUEST', message: 'strict applies to the openai and openai-responses formats only' });
  });
});

describe('GET /v1/tools?format=gemini', () => {
  it("lists functionDeclarations with schemas in Gemini's subset", async () => {
    const { functionDeclarations } = (await list('?format=gemini')).json() as { functionDeclarations: (Named & { parameters?: { properties: unknown } })[] };
    expect(byName(functionDeclarations, 'book_room')).toEqual({
      name: 'book_room', description: 'Book a room',
      parameters: {
        type: 'OBJECT',
        properties: {
          room: { type: 'STRING', description: 'Room id', minLength: '1' },
          size: { type: 'STRING', enum: ['small', 'large'] },
          when: { type: 'STRING', format: 'date-time' },
          site: { type: 'STRING' },
          guests: { type: 'ARRAY', maxItems: '8', items: { type: 'OBJECT', properties: { name: { type: 'STRING' }, age: { type: 'INTEGER', minimum: 0 } }, required: ['name'], propertyOrdering: ['name', 'age'] } },
          note: { type: 'STRING', nullable: true },
        },
        required: ['room'],
        propertyOrdering: ['room', 'size', 'when', 'site', 'guests', 'note'],
      },
    });
    expect(byName(functionDeclarations, 'with_refs')?.parameters?.properties).toEqual({
      from: { type: 'OBJECT', properties: { x: { type: 'NUMBER' }, y: { type: 'NUMBER' } }, required: ['x', 'y'], propertyOrdering: ['x', 'y'] },
      to: { type: 'OBJECT', properties: { x: { type: 'NUMBER' }, y: { type: 'NUMBER' } }, required: ['x', 'y'], propertyOrdering: ['x', 'y'] },
      id: { anyOf: [{ type: 'STRING' }, { type: 'INTEGER' }] },
    });
    expect(byName(functionDeclarations, 'picky')?.parameters?.properties).toEqual({ value: { anyOf: [{ type: 'STRING' }, { type: 'NUMBER' }] }, tag: { type: 'STRING', enum: ['x'] } });
    expect(byName(functionDeclarations, 'no_args')).toEqual({ name: 'no_args', description: 'Takes nothing' });
    expect(byName(functionDeclarations, 'slow')).not.toHaveProperty('parameters');
  });

  it('bounds the work of references that fan out', async () => {
    const { geminiParameters } = await import('../../src/registry/gemini-schema.js');
    const defs: Record<string, unknown> = { d0: { type: 'string' } };
    for (let i = 1; i <= 30; i++) defs[`d${i}`] = { type: 'object', properties: { a: { $ref: `#/$defs/d${i - 1}` }, b: { $ref: `#/$defs/d${i - 1}` } } };
    const out = geminiParameters({ type: 'object', $defs: defs, properties: { root: { $ref: '#/$defs/d30' } } });
    expect(JSON.stringify(out).length).toBeLessThan(200_000);
  });
});

describe('format errors and caching', () => {
  it('answers an unknown format with the allowed values', async () => {
    const res = await list('?format=xml');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'TG_BAD_REQUEST' });
    expect(res.json().message).toContain('native, openai, openai-responses, anthropic, gemini, mcp');
  });

  it('gives each format and strictness its own ETag, each answering 304', async () => {
    const etags = new Set<string>();
    for (const query of ['?format=openai', '?format=openai&strict=true', '?format=openai-responses', '?format=openai-responses&strict=true', '?format=gemini']) {
      const first = await list(query);
      const etag = String(first.headers.etag);
      etags.add(etag);
      expect((await list(query, { 'if-none-match': etag })).statusCode).toBe(304);
    }
    expect(etags.size).toBe(5);
  });
});

// The listings as they go over the wire, type-checked by tsc against the `openai` and `@google/genai`
// packages' own request types: each body is pasted as an object literal, so a wrong shape, a missing
// field or an extra one fails to compile.
const listing = async (query: string): Promise<string> => {
  const res = await app.inject({ method: 'GET', url: `/v1/tools${query}`, headers: bearer(token) });
  expect(res.statusCode).toBe(200);
  return res.body;
};

describe('listing formats against the SDK types', () => {
  it('openai, openai-responses (strict or not) and gemini bodies compile as the SDKs request types', { timeout: 60_000 }, async () => {
    const source = `import type OpenAI from 'openai';
import type { Tool as GeminiTool } from '@google/genai';

/** What an SDK type looks like as JSON: enums (Gemini's Type) become their string values. */
type Wire<T> = T extends string ? \`\${T}\` : T extends readonly (infer U)[] ? Wire<U>[] : T extends object ? { [K in keyof T]: Wire<T[K]> } : T;

export const chat: OpenAI.Chat.Completions.ChatCompletionFunctionTool[] = ${await listing('?format=openai')};
export const chatStrict: OpenAI.Chat.Completions.ChatCompletionFunctionTool[] = ${await listing('?format=openai&strict=true')};
export const responses: OpenAI.Responses.FunctionTool[] = ${await listing('?format=openai-responses')};
export const responsesStrict: OpenAI.Responses.FunctionTool[] = ${await listing('?format=openai-responses&strict=true')};
export const gemini: Wire<GeminiTool> = ${await listing('?format=gemini')};
`;
    const file = join(dir, 'listings.ts');
    await writeFile(file, source);
    const tsc = join(packageRoot(), 'node_modules/.bin/tsc');
    const compilerOptions = { noEmit: true, strict: true, skipLibCheck: true, target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', types: ['node'] };
    await writeFile(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['listings.ts'] }));
    const args = ['-p', dir];
    const run = await promisify(execFile)(tsc, args, { cwd: dir }).then(
      () => ({ ok: true, output: '' }),
      (error: { stdout?: string }) => ({ ok: false, output: error.stdout ?? String(error) }),
    );
    expect(run.output).toBe('');
    expect(run.ok).toBe(true);

    // The check can fail: a Gemini type in lower case (the JSON Schema spelling) does not compile.
    await writeFile(file, `${source}\nexport const wrong: Wire<GeminiTool> = { functionDeclarations: [{ name: 'x', parameters: { type: 'object' } }] };\n`);
    const broken = await promisify(execFile)(tsc, args, { cwd: dir }).then(() => '', (error: { stdout?: string }) => error.stdout ?? '');
    expect(broken).toContain('error TS');
  });
});
