// Shared fixtures for policy, chain and approval unit tests: a tool, a call, a context and deps.
import { createApprovalService } from '../../src/approvals/service.js';
import type { AuditEvent, AuditSink } from '../../src/audit/types.js';
import { Cancellation } from '../../src/shared/cancellation.js';
import { successResult } from '../../src/call/tool-result.js';
import type { Clock } from '../../src/pipeline/clock.js';
import type { Answer, Next, Policy, PolicyContext, PolicyDeps, PolicyLayer } from '../../src/pipeline/types.js';
import { defineTool } from '../../src/registry/define-tool.js';
import { createMemoryStore } from '../../src/store/memory.js';
import type { StateStore } from '../../src/store/types.js';
import type { JsonObject, Tool, ToolCall, ToolResult, ToolSpec } from '../../src/call/types.js';
import type { Principal } from '../../src/call/principal.js';
import type { Logger } from '../../src/pipeline/types.js';
import { toolContext } from '../fixtures/mcp/context.js';

export function makeTool(spec: Partial<ToolSpec> = {}): Tool {
  return defineTool({ name: 'lookup', handler: () => 'ok', ...spec });
}

export function makeCall(tool: Tool = makeTool(), args: JsonObject = {}, callId = 'call_1'): ToolCall {
  return { callId, tool, name: tool.name, arguments: args };
}

export const alice: Principal = { tenant: 'acme', user: 'alice', roles: ['user'], claims: { sub: 'alice', department: 'sales' } };
export const bob: Principal = { tenant: 'acme', user: 'bob', roles: ['approver'], claims: { sub: 'bob' } };

const silentLog = { info() {}, warn() {}, error() {}, debug() {}, trace() {}, fatal() {}, child: () => silentLog, level: 'silent' } as unknown as Logger;

/** A hand-built context; `signal` in `overrides` is the call's cancellation unless `cancellation` is given too. */
export function makeCtx(overrides: Partial<PolicyContext> = {}): PolicyContext {
  const base = toolContext({ principal: alice, callId: 'call_1', requestId: 'req-1', log: silentLog, ...(overrides.signal ? { signal: overrides.signal } : {}) });
  return {
    ...base,
    cancellation: Cancellation.of(base.signal),
    mode: 'default',
    checkAccess: () => ({ ok: true }),
    ...overrides,
  };
}

/** A sink that keeps events in memory. */
export function memoryAudit(): AuditSink & { events: AuditEvent[] } {
  const events: AuditEvent[] = [];
  return { events, write: (e) => void events.push(e), async flush() {}, async close() {} };
}

/** A clock whose sleep advances time instantly and records the delays. */
export function fakeClock(start = 1_000_000): Clock & { sleeps: number[]; advance(ms: number): void } {
  let t = start;
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => t,
    random: () => 0.5,
    advance: (ms) => void (t += ms),
    sleep: async (ms) => {
      sleeps.push(ms);
      t += ms;
    },
  };
}

export function makeDeps(overrides: Partial<PolicyDeps> & { store?: StateStore } = {}): PolicyDeps & { audit: ReturnType<typeof memoryAudit> } {
  const store = overrides.store ?? createMemoryStore();
  return { store, approvals: createApprovalService({ store }), ...overrides, audit: memoryAudit() };
}

/** A terminal executor that records its calls and answers from the tool's handler. */
export function recordingTerminal(): Next & { calls: ToolCall[] } {
  const calls: ToolCall[] = [];
  const terminal = async (call: ToolCall, ctx: PolicyContext) => {
    calls.push(call);
    return successResult(call, await call.tool.handler(call.arguments, ctx));
  };
  return Object.assign(terminal, { calls });
}

/**
 * A policy layer as one plain `(call, ctx, next)` function, composed the way the chain composes it (a layer
 * a factory left out hands every call on). `answered` collects what the layer answered itself.
 */
export function asPolicy(layer: PolicyLayer | undefined, answered: ToolResult[] = []): Policy {
  const answer: Answer = (result) => (answered.push(result), result);
  return (call, ctx, next) => (layer ? layer.wrap(next, answer)(call, ctx) : next(call, ctx));
}
