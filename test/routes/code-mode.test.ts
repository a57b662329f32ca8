// Code mode over MCP with the SDK's own client: a `mode: code` toolset lists search_tools, describe_tools and
// run_script; describe_tools' declarations type-check; every call a script makes is an ordinary governed,
// audited call of the caller; hostile scripts end at their limits while another tenant keeps answering.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readAuditLines } from '../helpers/audit-file.js';
import { bearer, buildTestApp, scrapeMetrics, signToken, testConfig } from '../helpers/build.js';

let app: FastifyInstance;
let baseUrl: string;
let dir: string;
let auditPath: string;
let alice: string;
let globex: string;
let client: Client;
/** A tenant of its own for the scripts whose workers must be terminated. */
let runaway: Client;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolgate-code-mode-'));
  auditPath = join(dir, 'audit.jsonl');
  app = await buildTestApp(
    testConfig({
      audit: { sink: 'file', path: auditPath },
      functions: [{ module: './test/fixtures/functions/code-mode.mjs' }, { module: './test/fixtures/functions/basic.mjs' }],
      tenants: {
        acme: {
          tools: { allow: ['*'], deny: ['secret_op'] },
          bindings: { whoami: { account: 'acct-bound' } },
          policies: { approval: { tools: ['transfer'] } },
          toolsets: {
            code: {
              mode: 'code',
              tools: ['add', 'get_user', 'whoami', 'transfer', 'secret_op', 'hostile_*', 'get_weather'],
              sandbox: { cpuTimeMs: 200, wallTimeMs: 5000, maxToolCalls: 50 },
            },
          },
        },
        globex: { functions: ['get_weather'] },
        // The tenant of the scripts a worker may have to be terminated for, which earns a tenant a cooldown.
        initech: { toolsets: { code: { mode: 'code', tools: ['add'], sandbox: { cpuTimeMs: 200, wallTimeMs: 5000, maxToolCalls: 50 } } } },
      },
    }),
  );
  baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  alice = await signToken({ sub: 'alice' });
  globex = await signToken({ sub: 'bob', tenant: 'globex' });
  client = new Client({ name: 'code-mode-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp/code`), { requestInit: { headers: bearer(alice) } }));
  runaway = new Client({ name: 'code-mode-test', version: '1.0.0' });
  await runaway.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp/code`), { requestInit: { headers: bearer(await signToken({ sub: 'carol', tenant: 'initech' })) } }));
});
afterAll(async () => {
  await client?.close();
  await runaway?.close();
  await app?.close();
  await rm(dir, { recursive: true, force: true });
});

const text = (result: Awaited<ReturnType<Client['callTool']>>): string => (result.content as { type: string; text: string }[]).map((part) => part.text).join('');
const runScript = async (code: string, as: Client = client) => {
  const result = await as.callTool({ name: 'run_script', arguments: { code } });
  return { isError: result.isError === true, text: text(result) };
};
const scriptResult = async (code: string): Promise<unknown> => {
  const answer = await runScript(code);
  expect(answer.isError, answer.text).toBe(false);
  return (JSON.parse(answer.text) as { result: unknown }).result;
};

describe('a code-mode toolset', () => {
  it('lists exactly three tools over MCP and over REST', async () => {
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['search_tools', 'describe_tools', 'run_script']);
    const rest = await app.inject({ method: 'GET', url: '/v1/tools?toolset=code', headers: bearer(alice) });
    expect((rest.json() as { tools: { name: string }[] }).tools.map((tool) => tool.name)).toEqual(['search_tools', 'describe_tools', 'run_script']);
  });

  it('searches the subset only, never a tool the tenant denies', async () => {
    const found = JSON.parse(text(await client.callTool({ name: 'search_tools', arguments: { query: 'user' } }))) as { tools: { name: string }[] };
    expect(found.tools.map((tool) => tool.name)).toContain('get_user');
    const denied = JSON.parse(text(await client.callTool({ name: 'search_tools', arguments: { query: 'secret' } }))) as { tools: unknown[] };
    expect(denied.tools).toEqual([]);
  });

  it('describes tools as TypeScript that tsc --noEmit accepts, hostile names and descriptions included', async () => {
    const declarations = text(await client.callTool({ name: 'describe_tools', arguments: { names: ['add', 'get_user', 'whoami', 'hostile_schema', 'secret_op', 'nope'] } }));
    expect(declarations).toContain('"add"(args: {');
    // The bound argument is not part of what the model is shown.
    expect(declarations).not.toMatch(/"account"/);
    expect(declarations).toContain('// not available in this toolset: secret_op, nope');
    const file = join(dir, 'tools.ts');
    const usage = 'export async function main(): Promise<unknown> {\n  return tools.add({ a: 1, b: 2 });\n}\n';
    await writeFile(file, `${declarations}\n${usage}`);
    const tsc = join(process.cwd(), 'node_modules', '.bin', 'tsc');
    const run = await promisify(execFile)(tsc, ['--ignoreConfig', '--noEmit', '--strict', '--target', 'es2022', '--lib', 'es2022', '--module', 'esnext', '--types', '', file]).then(
      () => ({ ok: true, output: '' }),
      (error: { stdout?: string }) => ({ ok: false, output: error.stdout ?? String(error) }),
    );
    expect(run, run.output).toEqual({ ok: true, output: '' });
    // The hostile description could not close its comment nor declare anything.
    expect(declarations).not.toMatch(/^\s*declare const (pwned|x|y)/m);
  }, 60_000);

  it('runs a script that calls two tools and combines their results; the audit has one line per inner call plus run_script', async () => {
    const result = await scriptResult(`
      const [sum, user]: [{ sum: number }, { name: string }] = await Promise.all([tools.add({ a: 2, b: 3 }), tools.get_user({ id: 'u1' })]);
      console.log('combining');
      return { greeting: user.name + ' has ' + sum.sum };
    `);
    expect(result).toEqual({ greeting: 'Ada has 5' });
    const lines = (await readAuditLines(app, auditPath)).filter((line) => line.event === 'call');
    const parent = lines.filter((line) => line.tool === 'run_script').at(-1);
    expect(parent).toMatchObject({ outcome: 'ok', user: 'alice', tenant: 'acme' });
    const inner = lines.filter((line) => line.parentCallId === parent?.callId);
    expect(inner.map((line) => line.tool).sort()).toEqual(['add', 'get_user']);
    const scriptId = inner[0]?.scriptId;
    expect(scriptId).toMatch(/^script_/);
    expect(inner.every((line) => line.scriptId === scriptId && line.user === 'alice' && line.outcome === 'ok')).toBe(true);
    const metrics = await scrapeMetrics(app);
    expect(metrics).toMatch(/toolgate_code_mode_calls_total\{kind="inner",source="code",outcome="ok"\} [1-9]/);
    expect(metrics).toMatch(/toolgate_code_mode_calls_total\{kind="script",source="code",outcome="ok"\} [1-9]/);
  });

  it('refuses a denied tool, an unknown one and one outside the toolset inside a script exactly as outside', async () => {
    const result = await scriptResult(`
      const out = [];
      for (const name of ['secret_op', 'no_such_tool', 'write_note']) {
        try { await tools[name]({}); out.push('ran'); } catch (e) { out.push(e.errorType + ': ' + e.message); }
      }
      return out;
    `);
    const direct = async (name: string) => {
      const res = await app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(alice), payload: { name, arguments: {}, toolset: 'code' } });
      const body = res.json() as { error: { errorType: string; error: string } };
      return `${body.error.errorType}: ${body.error.error}`;
    };
    // Called directly on the code toolset's endpoint, the same names answer the same.
    expect(result).toEqual([await direct('secret_op'), await direct('no_such_tool'), await direct('write_note')]);
    expect(result).toEqual(['PERMISSION_DENIED: tool secret_op is not available to this caller', 'UNKNOWN_TOOL: unknown tool: no_such_tool', 'PERMISSION_DENIED: tool write_note is not in toolset code']);
    const lines = (await readAuditLines(app, auditPath)).filter((line) => line.event === 'call' && line.scriptId !== undefined && line.tool === 'secret_op');
    expect(lines.at(-1)).toMatchObject({ outcome: 'PERMISSION_DENIED' });
  });

  it('hands a call waiting for approval back to the script as its pending result', async () => {
    const result = (await scriptResult(`const r = await tools.transfer({ amount: 5 }); return r.status === 'pending_approval' ? { parked: r.approvalId } : { ran: r };`)) as { parked?: string };
    expect(result.parked).toEqual(expect.any(String));
    const pending = await app.inject({ method: 'GET', url: '/v1/approvals', headers: bearer(await signToken({ sub: 'carol', roles: ['admin'] })) });
    expect(JSON.stringify(pending.json())).toContain(result.parked);
  });

  it('runs inner calls as the caller: the identity cannot be chosen and a bound argument cannot be overridden', async () => {
    const result = await scriptResult(`return await tools.whoami({ account: 'acct-of-someone-else', user: 'mallory' });`);
    expect(result).toEqual({ user: 'alice', tenant: 'acme', account: 'acct-bound' });
    // Another user's own tools are unknown, as outside a script.
    const foreign = await scriptResult(`try { await tools.user_bob_tool_x({}); } catch (e) { return e.errorType; }`);
    expect(foreign).toBe('UNKNOWN_TOOL');
  });

  it('accepts TypeScript annotations and reports a syntax error with its place', async () => {
    expect(await scriptResult(`const n: number = 1; interface P { x: string } return (n as number) + 1;`)).toBe(2);
    const bad = await runScript('return 1 +;');
    expect(bad).toMatchObject({ isError: true });
    expect(bad.text).toContain('line 1');
  });
});

describe('hostile scripts', () => {
  /**
   * Another tenant calls every 100 ms while the hostile script runs (at most 60 calls). Each call's time is
   * counted from when it was due, not from when a blocked event loop got round to sending it: a script
   * holding the loop shows up as a late answer.
   */
  const otherTenantWhile = async (running: Promise<unknown>): Promise<number> => {
    let done = false;
    void running.finally(() => (done = true));
    const first = performance.now();
    let worst = 0;
    for (let i = 0; i < 60 && !done; i++) {
      const due = first + i * 100;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - performance.now())));
      const res = await app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(globex), payload: { name: 'get_weather', arguments: { city: 'Oslo' } } });
      expect(res.json()).toMatchObject({ ok: true });
      worst = Math.max(worst, performance.now() - due);
    }
    return worst;
  };
  const whileRunning = async (code: string, as: Client = client) => {
    const script = runScript(code, as);
    const [answer, worst] = await Promise.all([script, otherTenantWhile(script)]);
    expect(worst).toBeLessThan(1000);
    expect(answer.isError, answer.text).toBe(true);
    return answer.text;
  };

  it('stops an infinite loop at the CPU time limit', async () => {
    expect(await whileRunning('for (;;) {}', runaway)).toContain('CPU time limit');
  });

  it('stops a memory bomb', async () => {
    expect(await whileRunning('const a = []; for (;;) a.push({ n: a.length, s: "x".repeat(64) });', runaway)).toMatch(/memory limit|CPU time limit/);
  });

  it('keeps the gateway answering while single native allocations, which no interrupt can stop, run at once', async () => {
    // Each is one native call: QuickJS's interrupt handler is not called inside it, so only the worker it
    // runs in (and the main thread's hard stop) bounds it. docs/code-mode.md#the-sandbox
    const bombs = ['new Array(3e7).fill(0); return 1;', "return 'x'.repeat(2 ** 28).length;", 'return Array.from({ length: 5e7 }, (_, i) => i).length;'];
    // Warm: the type stripper's first load and the other tenant's first call are not the attack.
    expect(await scriptResult('return 1')).toBe(1);
    await otherTenantWhile(Promise.resolve());
    for (let round = 0; round < 2; round++) {
      const scripts = Promise.all(bombs.map((code) => runScript(code, runaway)));
      const [answers, worst] = await Promise.all([scripts, otherTenantWhile(scripts)]);
      expect(worst).toBeLessThan(1000);
      for (const answer of answers) {
        expect(answer.isError, answer.text).toBe(true);
        // From its second forced stop its tenant's scripts are refused for a cooldown (docs/code-mode.md). A bomb
        // sharing a worker another bomb forced to stop is run again once, and if that worker is stopped too it is
        // told so (docs/code-mode.md, "a terminated worker's other scripts"): what a loaded machine may show.
        expect(answer.text).toMatch(/memory limit|CPU time limit|scripts are paused|worker running the script was stopped/);
      }
    }
  });

  it('stops a deep recursion', async () => {
    expect(await whileRunning('const f = (n) => f(n + 1) + 1; return f(0);')).toContain('stack limit');
  });

  it('refuses a huge return value', async () => {
    expect(await whileRunning('return "x".repeat(256 * 1024);')).toMatch(/larger than|memory limit/);
  });

  it('stops 10,000 tool calls at the tool-call limit', async () => {
    expect(await whileRunning('const all = []; for (let i = 0; i < 10000; i++) all.push(tools.add({ a: i, b: 1 })); await Promise.all(all); return 1;')).toContain('more than 50 tool calls');
  });

  it('reaches no host object: globalThis, constructor.constructor, Function, and pollution of what tools return', async () => {
    const result = (await scriptResult(`
      const r = await tools.get_user({ id: 'u1' });
      r.__proto__.polluted = 'yes';
      Object.prototype.hijacked = 'yes';
      const g = tools.add.constructor.constructor('return this')();
      const f = Function('return this')();
      return [typeof g.process, typeof f.require, typeof globalThis.process, typeof globalThis.fetch, typeof setTimeout, Object.keys(globalThis)];
    `)) as unknown[];
    expect(result).toEqual(['undefined', 'undefined', 'undefined', 'undefined', 'undefined', ['tools']]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).hijacked).toBeUndefined();
    // The next script starts in a clean sandbox.
    expect(await scriptResult(`return ({}).hijacked ?? 'clean';`)).toBe('clean');
  });
});
