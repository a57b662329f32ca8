import { randomUUID } from 'node:crypto';
import type { CallOptions, CallRequest } from '../execution/execute.js';
import { Cancellation } from '../shared/cancellation.js';
import { ToolError } from '../call/tool-error.js';
import { activeTraceContext } from '../observability/tracing.js';
import type { PolicyContext, ToolMode } from '../pipeline/types.js';
import { defineTool, isCallConcurrencySafe } from '../registry/define-tool.js';
import type { Pool } from '../registry/pool.js';
import { searchPool } from '../registry/search.js';
import { READ_ONLY_GATEWAY_TOOL, searchInputSchema } from '../registry/tool-search.js';
import { isToolName } from '../registry/tool-names.js';
import type { ErrorType, JsonObject, Tool, ToolContext, ToolResult } from '../call/types.js';
import type { Principal } from '../call/principal.js';
import { ConcurrencyGate } from './concurrency.js';
import { declareTools } from './declarations.js';
import type { SandboxLimits } from './limits.js';
import { argumentsTooLarge, runInSandbox, stopMessage, type HostAnswer, type SandboxOutcome } from './sandbox.js';
import { stripTypes } from './strip-types.js';

/** What the code-mode tools of one toolset need from the gateway. */
export interface CodeModeHost {
  /** The toolset's subset of the caller's pool: the tools a script may call. */
  poolFor(principal: Principal, mode: ToolMode): Promise<Pool>;
  /** One call in that subset, as a direct call of the caller would run (executeCall). */
  execute(request: CallRequest, options: CallOptions): Promise<ToolResult>;
  /** Counts each finished script (`ok` or why it stopped) and each inner call's outcome. */
  count?(kind: 'script' | 'inner', outcome: string): void;
  /**
   * Takes one of the tenant's in-flight slots (`limits.maxInFlight`) for an inner call while it runs, or
   * says why not.
   */
  holdSlot?(tenant: string): Promise<{ release: () => void } | { refused: string }>;
}

const DESCRIBE_MAX_NAMES = 20;
const MAX_CODE_CHARS = 100_000;
const MAX_ONE_LINE_CHARS = 200;

const modeOf = (ctx: ToolContext): ToolMode => (ctx as Partial<PolicyContext>).mode ?? 'default';

/** search_tools, describe_tools and run_script over one code-mode toolset. docs/code-mode.md */
export function createCodeModeTools(host: CodeModeHost, limits: SandboxLimits): Tool[] {
  const searchTools = defineTool({
    name: 'search_tools',
    description: 'Search the tools a script can call (`tools.<name>(args)` in run_script) by name or purpose: names and one-line descriptions. Then call describe_tools for their TypeScript declarations.',
    inputSchema: searchInputSchema(10),
    ...READ_ONLY_GATEWAY_TOOL,
    async handler(args, ctx) {
      const pool = await host.poolFor(ctx.principal, modeOf(ctx));
      const limit = typeof args.limit === 'number' ? args.limit : 10;
      return { tools: searchPool(pool, String(args.query), limit).map((tool) => ({ name: tool.name, description: oneLine(tool.description) })) };
    },
  });

  const describeTools = defineTool({
    name: 'describe_tools',
    description: 'TypeScript declarations of tools a script can call: `tools.<name>(args): Promise<result>`, with their descriptions as doc comments.',
    inputSchema: {
      type: 'object',
      properties: { names: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 64 }, minItems: 1, maxItems: DESCRIBE_MAX_NAMES } },
      required: ['names'],
      additionalProperties: false,
    },
    ...READ_ONLY_GATEWAY_TOOL,
    async handler(args, ctx) {
      const pool = await host.poolFor(ctx.principal, modeOf(ctx));
      const names = [...new Set((args.names as unknown[]).filter((name): name is string => typeof name === 'string'))];
      const found = names.map((name) => pool.byName.get(name)).filter((tool): tool is Tool => tool !== undefined);
      // Names outside the subset are listed only when they are well-formed tool names: nothing sent is echoed raw.
      const missing = names.filter((name) => !pool.byName.has(name) && isToolName(name));
      const text = declareTools(found.map((tool) => ({ name: tool.name, description: tool.description, inputSchema: pool.schemaOf(tool), outputSchema: tool.outputSchema })));
      return missing.length === 0 ? text : `${text}// not available in this toolset: ${missing.join(', ')}\n`;
    },
  });

  const runScriptTool = defineTool({
    name: 'run_script',
    description:
      'Run a short JavaScript (or TypeScript: annotations are stripped) script, the body of an async function, with a global `tools` object: ' +
      '`const r = await tools.<name>(args)`. Use `return` for the result (JSON) and console.log to report. Only the returned value and the log come back. ' +
      'A refused call rejects with a ToolCallError (errorType, message); one waiting for approval resolves to {status: "pending_approval", approvalId}. ' +
      'No timers, network, files or imports.',
    inputSchema: {
      type: 'object',
      properties: { code: { type: 'string', minLength: 1, maxLength: MAX_CODE_CHARS, description: 'The script body' } },
      required: ['code'],
      additionalProperties: false,
    },
    source: 'builtin',
    // Its inner calls are each governed on their own; the script itself only runs them.
    isConcurrencySafe: () => false,
    // The script's own bound, plus room for the answer: the timeout policy never cuts a script short first.
    timeoutMs: limits.wallTimeMs + 5000,
    maxResultChars: limits.maxResultBytes + limits.maxLogBytes + 1000,
    async handler(args, ctx) {
      const scriptId = `script_${randomUUID()}`;
      const stripped = stripTypes(String(args.code));
      if (!stripped.ok) throw new ToolError('VALIDATION_ERROR', `the script does not parse: ${stripped.message}`, { trace: { scriptId }, permanent: true });
      const outcome = await runScript(host, limits, stripped.code, scriptId, ctx);
      host.count?.('script', outcome.ok ? 'ok' : outcome.stop);
      if (!outcome.ok) {
        const errorType = outcome.stop === 'wall_time' || outcome.stop === 'cpu_time' ? 'TIMEOUT' : outcome.stop === 'busy' || outcome.stop === 'cooldown' ? 'RATE_LIMITED' : 'TOOL_EXCEPTION';
        const logs = outcome.logs.length === 0 ? '' : `\nlogged:\n${outcome.logs.join('\n')}${outcome.logsTruncated ? '\n…[log truncated]' : ''}`;
        const message = outcome.stop === 'script_error' || outcome.stop === 'never_settles' ? outcome.message : stopMessage(outcome.stop, limits);
        const retry = outcome.retryAfterMs === undefined ? {} : { retryAfterMs: outcome.retryAfterMs };
        throw new ToolError(errorType, `${message}${logs}`, { trace: { scriptId, stop: outcome.stop, toolCalls: outcome.toolCalls }, permanent: true, ...retry });
      }
      return {
        output: { scriptId, result: JSON.parse(outcome.resultJson) as unknown, logs: outcome.logs, ...(outcome.logsTruncated ? { logsTruncated: true } : {}), toolCalls: outcome.toolCalls },
        trace: { scriptId, toolCalls: outcome.toolCalls },
      };
    },
  });

  return [searchTools, describeTools, runScriptTool];
}

/**
 * Waits this long, after a script ended, for inner calls still running to answer: each was aborted with a
 * typed reason, which the timeout policy answers at once, so only a chain without that policy waits.
 */
const INNER_CALLS_GRACE_MS = 1000;

async function runScript(host: CodeModeHost, limits: SandboxLimits, code: string, scriptId: string, ctx: ToolContext): Promise<SandboxOutcome> {
  const mode = modeOf(ctx);
  const gate = new ConcurrencyGate(limits.maxParallel);
  // The run_script span is current here: each inner call's span is its child.
  const trace = activeTraceContext();
  const pool = host.poolFor(ctx.principal, mode);
  const running = new Set<Promise<unknown>>();
  let sequence = 0;
  const refuse = (errorType: ErrorType, message: string, name: string, callId: string): HostAnswer => {
    host.count?.('inner', errorType);
    return { reject: JSON.stringify({ errorType, message, tool: name, callId }) };
  };
  // `ended` is the sandbox's signal for this script: aborted once the script has answered (return, throw,
  // a limit, a cancel). No call starts after it; a running one is aborted with a typed reason.
  const innerCall = async (name: string, argsJson: string, ended: AbortSignal, callId: string): Promise<HostAnswer> => {
    const safe = isSafe((await pool).byName.get(name), argsJson);
    return gate.run(safe, async () => {
      if (ended.aborted) return refuse('TIMEOUT', SCRIPT_ENDED, name, callId);
      const slot = (await host.holdSlot?.(ctx.principal.tenant)) ?? { release: noop };
      if ('refused' in slot) return refuse('RATE_LIMITED', slot.refused, name, callId);
      const cancellation = new Cancellation();
      const end = (): void => cancellation.abort(new ToolError('TIMEOUT', SCRIPT_ENDED));
      ended.addEventListener('abort', end, { once: true });
      // The slot is held until every handler of the call has settled, even one answered before (it ignored its abort).
      const handlers: Promise<unknown>[] = [];
      try {
        const result = await host.execute(
          { name, arguments: argsJson, callId },
          {
            principal: ctx.principal,
            requestId: ctx.requestId,
            log: ctx.log,
            cancellation,
            depth: ctx.depth,
            mode,
            defaultCallId: callId,
            ...(trace === undefined ? {} : { trace }),
            script: { scriptId, parentCallId: ctx.callId, track: (handler) => void handlers.push(handler) },
          },
        );
        host.count?.('inner', result.status ?? (result.ok ? 'ok' : (result.error?.errorType ?? 'TOOL_EXCEPTION')));
        return answerOf(result);
      } finally {
        ended.removeEventListener('abort', end);
        const lingering = Promise.allSettled(handlers).then(slot.release);
        running.add(lingering);
        void lingering.finally(() => running.delete(lingering));
      }
    });
  };
  const outcome = await runInSandbox(
    code,
    (name, argsJson, ended): Promise<HostAnswer> => {
      sequence += 1;
      const callId = `${scriptId}_${sequence}`;
      // Measured inside the sandbox first (UTF-16 units); in bytes here, before anything parses it.
      if (Buffer.byteLength(argsJson) > limits.maxArgumentBytes) return Promise.resolve(refuse('VALIDATION_ERROR', argumentsTooLarge(name, limits), name, callId));
      const call = innerCall(name, argsJson, ended, callId);
      running.add(call);
      void call.finally(() => running.delete(call));
      return call;
    },
    limits,
    ctx.signal,
    ctx.principal.tenant,
  );
  // The script has answered; its calls still running were aborted by then. Its answer waits for them.
  if (running.size > 0) await Promise.race([Promise.allSettled(running), new Promise((resolve) => setTimeout(resolve, INNER_CALLS_GRACE_MS).unref())]);
  return outcome;
}

const SCRIPT_ENDED = 'the script ended before this call finished';
const noop = (): void => {};

/** A call that will be refused (unknown name, arguments not JSON) counts as safe, as in a batch. */
function isSafe(tool: Tool | undefined, argsJson: string): boolean {
  if (!tool) return true;
  let args: unknown;
  try {
    args = JSON.parse(argsJson);
  } catch {
    return true;
  }
  return typeof args !== 'object' || args === null || Array.isArray(args) ? true : isCallConcurrencySafe(tool, args as JsonObject);
}

/**
 * The script's view of a finished call: a success resolves to its output (parsed when it is JSON), a call
 * waiting for approval resolves to its pending ToolResult, anything else rejects with the failure.
 */
function answerOf(result: ToolResult): HostAnswer {
  if (result.ok) return { resolve: isJson(result.output) ? result.output : JSON.stringify(result.output) };
  if (result.status === 'pending_approval') {
    return { resolve: JSON.stringify({ ok: false, status: result.status, approvalId: result.approvalId, callId: result.callId, name: result.name, output: result.output }) };
  }
  return { reject: JSON.stringify({ errorType: result.error?.errorType ?? 'TOOL_EXCEPTION', message: result.error?.error ?? result.output, tool: result.name, callId: result.callId }) };
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function oneLine(text: string): string {
  const line = text.split('\n', 1)[0]?.trim() ?? '';
  return line.length > MAX_ONE_LINE_CHARS ? `${line.slice(0, MAX_ONE_LINE_CHARS)}…` : line;
}
