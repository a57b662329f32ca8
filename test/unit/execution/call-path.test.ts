// The call path (src/execution/): prepare (structure, resolve, schema) once, then the chain, with every
// refusal before the chain answered and audited through the one writer of call events.
import { describe, expect, it, vi } from 'vitest';
import type { Principal } from '../../../src/call/principal.js';
import type { Next, ToolCall, ToolResult } from '../../../src/call/types.js';
import { successResult } from '../../../src/call/tool-result.js';
import { executeCall, type CallOptions, type ExecutionScope } from '../../../src/execution/execute.js';
import { prepareCall, type PrepareScope } from '../../../src/execution/prepare.js';
import { createSchemaValidator } from '../../../src/execution/schema-validator.js';
import type { GatewayMetrics } from '../../../src/observability/gateway-metrics.js';
import { createTenantView } from '../../../src/registry/tenant-view.js';
import { Cancellation } from '../../../src/shared/cancellation.js';
import { memoryAudit } from '../../helpers/policy-fixtures.js';
import { catalogOf, poolOf, principal, silentLog, tenantConfig, tool } from '../../helpers/registry.js';

const weather = tool('get_weather', 'function', {
  aliases: ['weather'],
  inputSchema: { type: 'object', properties: { city: { type: 'string' }, units: { type: 'string' } }, required: ['city'], additionalProperties: false },
});
const echo = tool('echo', 'function', { checkStructure: (args) => (args.text === 'bad' ? 'text must not be bad' : undefined) });

function prepareScope(): PrepareScope {
  const catalog = catalogOf([weather, echo]);
  const config = tenantConfig({});
  return { catalog, tenant: createTenantView('t', config), pool: poolOf(catalog, config), validatorFor: createSchemaValidator() };
}

describe('prepareCall', () => {
  const scope = prepareScope();
  const prepare = (request: Parameters<typeof prepareCall>[0]) => prepareCall(request, 'c1', 'alice', silentLog, scope);

  it('hands the chain a call of the resolved tool, under its canonical name, with the arguments parsed', () => {
    const prepared = prepare({ name: 'weather', arguments: '{"city":"Oslo"}' });
    expect(prepared.ok).toBe(true);
    if (!prepared.ok) return;
    expect(prepared.call).toMatchObject({ callId: 'c1', name: 'get_weather', arguments: { city: 'Oslo' }, resolvedFrom: 'weather' });
    expect(prepared.call.tool).toBe(scope.pool.byName.get('get_weather'));
  });

  it('refuses a missing name and arguments that are not a JSON object, before resolving anything', () => {
    for (const request of [{ name: '' }, { name: 42 }, { name: 'get_weather', arguments: '[1]' }, { name: 'get_weather', arguments: '{"__proto__":{}}' }]) {
      const prepared = prepare(request);
      expect(prepared.ok).toBe(false);
      if (prepared.ok) continue;
      expect(prepared.refusal.error?.errorType).toBe('VALIDATION_ERROR');
      expect(prepared.tool).toBeUndefined();
    }
  });

  it('refuses an unknown tool with the arguments kept for the audit event', () => {
    const prepared = prepare({ name: 'nope', arguments: { a: 1 } });
    expect(prepared).toMatchObject({ ok: false, args: { a: 1 }, refusal: { ok: false, error: { errorType: 'UNKNOWN_TOOL' } } });
  });

  it("refuses arguments the tool's schema or structural check rejects, naming the tool", () => {
    const invalid = prepare({ name: 'get_weather', arguments: { town: 'Oslo' } });
    expect(invalid).toMatchObject({ ok: false, tool: { name: 'get_weather' }, refusal: { error: { errorType: 'VALIDATION_ERROR' } } });
    if (!invalid.ok) expect(invalid.refusal.error?.error).toMatch(/^get_weather arguments are invalid/);
    expect(prepare({ name: 'echo', arguments: { text: 'bad' } })).toMatchObject({ ok: false, refusal: { error: { error: 'text must not be bad' } } });
  });

  it('drops an optional argument sent as null (OpenAI strict mode) when only that makes the call valid', () => {
    const prepared = prepare({ name: 'get_weather', arguments: { city: 'Oslo', units: null } });
    expect(prepared.ok && prepared.call.arguments).toEqual({ city: 'Oslo' });
  });
});

function pathScope(chain: Next) {
  const audit = memoryAudit();
  const recordCall = vi.fn<GatewayMetrics['recordCall']>();
  const metrics = { recordCall } as Partial<GatewayMetrics> as GatewayMetrics;
  const scope: ExecutionScope = { ...prepareScope(), chain, metrics, audit };
  return { scope, audit, recordCall };
}

function options(overrides: Partial<CallOptions> = {}): CallOptions {
  const who: Principal = principal();
  return { principal: who, requestId: 'req-1', log: silentLog, cancellation: new Cancellation(), depth: 0, mode: 'default', defaultCallId: 'call_default', ...overrides };
}

describe('executeCall', () => {
  it('runs a valid call through the chain once and answers its result, timed and counted once', async () => {
    const seen: ToolCall[] = [];
    const chain: Next = (call) => {
      seen.push(call);
      return Promise.resolve(successResult(call, 'sunny'));
    };
    const { scope, audit, recordCall } = pathScope(chain);
    const result = await executeCall({ name: 'get_weather', arguments: { city: 'Oslo' } }, options(), scope);
    expect(result).toMatchObject({ ok: true, output: 'sunny', callId: 'call_default', name: 'get_weather' });
    expect(typeof result.durationMs).toBe('number');
    expect(seen).toHaveLength(1);
    expect(recordCall).toHaveBeenCalledTimes(1);
    // The chain's own audit policy records calls that reach it: the path writes nothing for them.
    expect(audit.events).toEqual([]);
  });

  it("uses the request's own call id over the default one", async () => {
    const { scope } = pathScope((call) => Promise.resolve(successResult(call, 'ok')));
    const result = await executeCall({ name: 'get_weather', arguments: { city: 'Oslo' }, callId: 'mine' }, options(), scope);
    expect(result.callId).toBe('mine');
  });

  it('answers a call refused before the chain without running it, and audits it exactly once', async () => {
    const chain = vi.fn<Next>();
    const { scope, audit, recordCall } = pathScope(chain);
    const result: ToolResult = await executeCall({ name: 'get_weather', arguments: { town: 'Oslo' } }, options(), scope);
    expect(result).toMatchObject({ ok: false, error: { errorType: 'VALIDATION_ERROR' } });
    expect(chain).not.toHaveBeenCalled();
    expect(recordCall).toHaveBeenCalledTimes(1);
    expect(audit.events).toHaveLength(1);
    expect(audit.events[0]).toMatchObject({ event: 'call', tool: 'get_weather', source: 'function', outcome: 'VALIDATION_ERROR', requestId: 'req-1', callId: 'call_default' });
    expect(audit.events[0]).toHaveProperty('argsSha256', expect.stringMatching(/^[0-9a-f]{64}$/));
  });

  it("leaves an approved run's refusal to its approval decision (no second event)", async () => {
    const { scope, audit } = pathScope(vi.fn<Next>());
    await executeCall({ name: 'nope' }, options({ approval: { id: 'ap1', approvedBy: 'bob' } }), scope);
    expect(audit.events).toEqual([]);
  });
});
