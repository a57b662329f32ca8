// Patterns from outside the code run on the linear-time engine, so none of them can hold the event loop:
// a glob argument, grep's include glob, a user's own MCP server's schema pattern and an imported OpenAPI
// document's pattern, each run in a loop while another tenant keeps calling a cheap tool. Before, picomatch
// held the loop 8.9 s on `*a*a*a*a*a*ab` over a 100-character name, ajv 4 s on `^(a+)+$` against 27 `a`s
// and a `!`, and `^(\w|\d)*$` (let through by a nested-quantifier heuristic) 7.8 s on 28 characters.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, signToken, testConfig } from '../helpers/build.js';
import { executorFor, victimLatenciesDuring, type Execute } from '../helpers/liveness.js';
import { startMcpUpstream, type TestUpstream } from '../helpers/mcp-upstream.js';
import { startPetsApi, type PetsApi } from '../helpers/pets-api.js';

const LONG_NAME = 'a'.repeat(100);
const GLOB_ATTACK = '*a*a*a*a*a*ab';
const ATTACK_MS = 2500;
const LIVENESS_MS = 1000;

const hostileDocument = {
  openapi: '3.0.3',
  info: { title: 'hostile', version: '1' },
  paths: {
    '/items/{id}': {
      get: {
        operationId: 'getItem',
        parameters: [
          { name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: '^[a-z]{1,8}$' } },
          { name: 'q', in: 'query', schema: { type: 'string', pattern: '^(\\w|\\d)*$' } },
          { name: 'r', in: 'query', schema: { type: 'string', pattern: '^(a|aa)*$' } },
          { name: 'code', in: 'query', schema: { type: 'string', pattern: '^(?=[A-Z])[A-Z0-9]{3}$' } },
        ],
        responses: { '200': { description: 'ok' } },
      },
    },
  },
};

let dir: string;
let app: FastifyInstance;
let userServer: TestUpstream;
let api: PetsApi;
let attacker: string;
let execute: Execute;
const agent = new Agent({ connections: 16 });

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'toolgate-pattern-attack-'));
  await mkdir(path.join(dir, 'attacker', 'names'), { recursive: true });
  await writeFile(path.join(dir, 'attacker', 'names', LONG_NAME), 'aaaa\n');
  await writeFile(path.join(dir, 'attacker', 'names', 'note.txt'), 'aaaa\n');
  const spec = path.join(dir, 'hostile.json');
  await writeFile(spec, JSON.stringify(hostileDocument));
  api = await startPetsApi();
  api.routes.set('/items/abc', (_request, reply) => reply(200, '{"found":true}'));
  userServer = await startMcpUpstream([
    {
      definition: {
        name: 'check',
        description: 'checks a word',
        inputSchema: {
          type: 'object',
          properties: {
            word: { type: 'string', pattern: '^(a+)+$' },
            code: { type: 'string', pattern: '^(?!x)[a-z]+$' },
            tag: { type: 'string', pattern: '^(a)\\1$' },
          },
        },
      },
      call: (args) => ({ content: [{ type: 'text', text: `checked ${JSON.stringify(args)}` }] }),
    },
    {
      // The SDK's client checks structured output against the output schema the server listed.
      definition: {
        name: 'echo',
        description: 'echoes a word as structured output',
        inputSchema: { type: 'object', properties: { word: { type: 'string' } } },
        outputSchema: { type: 'object', properties: { word: { type: 'string', pattern: '^(a+)+$' } } },
      },
      call: (args) => ({ content: [{ type: 'text', text: String(args.word) }], structuredContent: { word: String(args.word) } }),
    },
  ]);
  app = await buildTestApp(
    testConfig({
      // Loopback allowed only because the user's test server and the API listen there.
      egress: { allow: ['127.0.0.1'] },
      builtins: { workspaceRoot: dir, sandbox: 'none' },
      openapi: [{ name: 'hostile', spec, baseUrl: api.base, timeoutMs: 5000 }],
      tenants: {
        // No breaker: the attack's refused outputs would open it and answer CIRCUIT_OPEN without calling.
        attacker: { builtins: ['glob', 'grep'], policies: { retry: false, 'circuit-breaker': false } },
        victim: {},
        acme: {},
      },
    }),
  );
  execute = executorFor(await app.listen({ host: '127.0.0.1', port: 0 }), agent);
  attacker = await signToken({ tenant: 'attacker', sub: 'mallory' });
  const put = await app.inject({ method: 'PUT', url: '/v1/users/mallory/mcp-servers/own', headers: bearer(attacker), payload: { url: userServer.url } });
  expect(put.statusCode).toBe(201);
});
afterAll(async () => {
  await app?.close();
  await userServer?.close();
  await api?.close();
  await agent.close();
  await rm(dir, { recursive: true, force: true });
});

/** Another tenant calls get_weather (a fresh token each time: nothing from the verified-token cache) during the attack. */
const victimLatencies = (attack: () => Promise<void>) =>
  victimLatenciesDuring(
    attack,
    async (i) => {
      const token = await signToken({ tenant: 'victim', sub: `victim-${i}` });
      expect((await execute(token, 'get_weather', { city: 'Oslo' })).body.ok).toBe(true);
    },
    { durationMs: ATTACK_MS },
  );

const expectLive = (latencies: number[]) => {
  expect(Math.max(...latencies)).toBeLessThan(LIVENESS_MS);
  expect(latencies.length).toBeGreaterThan(5);
};

describe('patterns from outside the code never hold the event loop', () => {
  it('glob: a backtracking glob over a 100-character name answers at once, and other tenants stay live', async () => {
    const latencies = await victimLatencies(async () => {
      const { body } = await execute(attacker, 'glob', { pattern: GLOB_ATTACK, path: 'names' });
      expect(body.ok, body.output).toBe(true);
      expect(JSON.parse(body.output)).toMatchObject({ matches: [], count: 0 });
    });
    expectLive(latencies);
  }, 60_000);

  it("grep: the same glob as include, checked against one named file's name", async () => {
    const latencies = await victimLatencies(async () => {
      const { body } = await execute(attacker, 'grep', { pattern: 'a', path: `names/${LONG_NAME}`, include: GLOB_ATTACK });
      expect(body.ok, body.output).toBe(true);
      expect(JSON.parse(body.output)).toMatchObject({ totalMatches: 0 });
    });
    expectLive(latencies);
  }, 60_000);

  it("a user's own MCP server: its schema's ^(a+)+$ runs linear-time against 27 a's and a !", async () => {
    const latencies = await victimLatencies(async () => {
      const { body } = await execute(attacker, 'user_mallory_tool_check', { word: `${'a'.repeat(27)}!` });
      expect(body.error?.errorType, body.output).toBe('VALIDATION_ERROR');
    });
    expectLive(latencies);
  }, 60_000);

  it("a user's own MCP server: its output schema's ^(a+)+$ against structured output of 27 a's and a !", async () => {
    expect((await execute(attacker, 'user_mallory_tool_echo', { word: 'aaaa' })).body).toMatchObject({ ok: true, output: 'aaaa' });
    const latencies = await victimLatencies(async () => {
      const { body } = await execute(attacker, 'user_mallory_tool_echo', { word: `${'a'.repeat(27)}!` });
      expect(body.ok).toBe(false);
      expect(body.error?.error).toMatch(/does not match the tool's output schema/);
    });
    expectLive(latencies);
  }, 60_000);

  it('an imported OpenAPI document: ^(\\w|\\d)*$ against 28 digits and a !, ^(a|aa)*$ against 42 a\'s and a !', async () => {
    const latencies = await victimLatencies(async () => {
      // \w and \d overlap on digits: 2^28 ways to split 28 of them for a backtracking engine; (a|aa)* has fib(42).
      for (const args of [{ id: 'abc', q: `${'1'.repeat(28)}!` }, { id: 'abc', r: `${'a'.repeat(42)}!` }]) {
        const { body } = await execute(attacker, 'hostile_getItem', args);
        expect(body.error?.errorType, body.output).toBe('VALIDATION_ERROR');
      }
    });
    expectLive(latencies);
  }, 60_000);
});

describe('patterns the linear-time engine cannot run', () => {
  it('refuses a glob that needs look-ahead, with the reason', async () => {
    for (const [name, args] of [['glob', { pattern: '!(*.ts)' }], ['grep', { pattern: 'a', path: `names/${LONG_NAME}`, include: '!(*.ts)' }]] as const) {
      const { body } = await execute(attacker, name, args);
      expect(body.error?.errorType).toBe('VALIDATION_ERROR');
      expect(body.error?.error).toMatch(/look-ahead.*linear-time engine/);
    }
  });

  it("lists a user's tool without a pattern RE2 refuses (lookahead, backreference) and notes why; the runnable pattern stays and is checked", async () => {
    const listed = (await app.inject({ url: '/v1/tools', headers: bearer(attacker) })).json().tools as Array<{ name: string; inputSchema: { properties: Record<string, Record<string, unknown>> } }>;
    const schema = listed.find((tool) => tool.name === 'user_mallory_tool_check')!.inputSchema;
    expect(schema.properties.word).toEqual({ type: 'string', pattern: '^(a+)+$' });
    expect(schema.properties.code).toEqual({ type: 'string', $comment: expect.stringMatching(/^pattern "\^\(\?!x\)\[a-z\]\+\$" is not checked by the gateway: the linear-time regex engine \(RE2\) cannot run it/) });
    expect(schema.properties.tag!.pattern).toBeUndefined();
    expect(schema.properties.tag!.$comment).toMatch(/cannot run it: invalid escape sequence/);
    // Ordinary patterns still accept and reject.
    expect((await execute(attacker, 'user_mallory_tool_check', { word: 'aaaa' })).body).toMatchObject({ ok: true, output: 'checked {"word":"aaaa"}' });
    expect((await execute(attacker, 'user_mallory_tool_check', { word: 'aab' })).body.error).toEqual({ errorType: 'VALIDATION_ERROR', error: expect.stringContaining('must match pattern "^(a+)+$"') });
    // What was taken out is the upstream's to check.
    expect((await execute(attacker, 'user_mallory_tool_check', { code: 'xyz', tag: 'aa' })).body).toMatchObject({ ok: true });
  });

  it('imports an OpenAPI operation with its runnable patterns checked and the refused one taken out and noted', async () => {
    const listed = (await app.inject({ url: '/v1/tools', headers: bearer(attacker) })).json().tools as Array<{ name: string; inputSchema: { properties: Record<string, Record<string, unknown>> } }>;
    const schema = listed.find((tool) => tool.name === 'hostile_getItem')!.inputSchema;
    expect(schema.properties.q!.pattern).toBe('^(\\w|\\d)*$');
    expect(schema.properties.code!.pattern).toBeUndefined();
    expect(schema.properties.code!.$comment).toMatch(/not checked by the gateway: .*`\(\?=`/);
    expect((await execute(attacker, 'hostile_getItem', { id: 'abc', q: 'word_42' })).body).toMatchObject({ ok: true, output: expect.stringContaining('found') });
    expect((await execute(attacker, 'hostile_getItem', { id: 'ABC' })).body.error?.errorType).toBe('VALIDATION_ERROR');
    expect((await execute(attacker, 'hostile_getItem', { id: 'abc', q: 'no spaces' })).body.error?.errorType).toBe('VALIDATION_ERROR');
  });
});
