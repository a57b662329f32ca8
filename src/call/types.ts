// The call contract's types: a tool as the registry holds it, the call as it travels the policy chain, and
// the context a handler and a policy receive (docs/architecture.md#the-call-contract). Dependency-free on
// purpose: the imports are the ToolResult schema, the cancellation type and the caller's principal.
import type { FastifyBaseLogger } from 'fastify';
import type { ToolResult, ToolSourceKind } from '../schemas/tool-result.js';
import type { Cancellation } from '../shared/cancellation.js';
import type { Principal } from './principal.js';

export type JsonObject = Record<string, unknown>;

// The ToolResult and the enums it carries: one source, its schema (src/schemas/tool-result.ts).
export { ERROR_TYPES, SOURCE_PRECEDENCE, type ErrorType, type ToolFailure, type ToolResult, type ToolSourceKind } from '../schemas/tool-result.js';

export type Logger = FastifyBaseLogger;

/** Set on each call a code-mode script makes: the script, and the `run_script` call that ran it (docs/code-mode.md). */
export interface ScriptOrigin {
  readonly scriptId: string;
  readonly parentCallId: string;
  /**
   * Told of the promise of each handler the call runs: the script accounts for its call until the handler
   * settles, also when the call was answered before (a handler that ignores its cancellation).
   */
  readonly track?: (handler: Promise<unknown>) => void;
}

/** What a tool handler receives besides its arguments. */
export interface ToolContext {
  readonly principal: Principal;
  readonly callId: string;
  readonly requestId: string;
  /** Aborted on timeout, client cancellation or shutdown; executors must honour it. */
  readonly signal: AbortSignal;
  readonly log: Logger;
  /** Depth of the incoming request (`X-Toolgate-Depth`, 0 when absent); upstream calls forward depth + 1. */
  readonly depth: number;
  /** Set when the caller asked to hear progress (an MCP client's `progressToken`): an MCP upstream's reports go here. */
  readonly onProgress?: ((update: ProgressUpdate) => void) | undefined;
}

/** One progress report of a running call, as MCP's `notifications/progress` carries it. */
export interface ProgressUpdate {
  progress: number;
  total?: number;
  message?: string;
}

/**
 * A handler may return a string, any JSON value, or `{ output, trace }`.
 * Typed failures are thrown as `ToolError`; anything else thrown becomes TOOL_EXCEPTION.
 */
export type ToolHandler = (args: JsonObject, ctx: ToolContext) => unknown;

export interface ToolOutput {
  output: unknown;
  trace?: unknown;
}

/** What a tool author writes (module export, config entry, MCP adapter, built-in). */
export interface ToolSpec {
  name: string;
  description?: string;
  inputSchema?: JsonObject;
  /** An MCP upstream's declared outputSchema: listed over toolgate's MCP endpoint, never validated here. */
  outputSchema?: JsonObject;
  handler: ToolHandler;
  source?: ToolSourceKind;
  /** Upstream service id (MCP service, webhook) — the circuit-breaker key. */
  service?: string;
  readOnly?: boolean;
  destructive?: boolean;
  idempotent?: boolean;
  isConcurrencySafe?: (args: JsonObject) => boolean;
  permission?: ToolPermission;
  maxResultChars?: number;
  timeoutMs?: number;
  aliases?: readonly string[];
  deferLoading?: boolean;
  searchHint?: string;
  feature?: string;
  /** Tool-specific structural checks beyond JSON Schema (docs/architecture.md#built-in-tools); returns a message or undefined. */
  checkStructure?: (args: JsonObject) => string | undefined;
  /**
   * Server-side argument templates (e.g. a RAG filter `{tenant: "${principal.tenant}"}`), merged over the
   * model's arguments by the bind-arguments policy. Their top-level keys never appear in a model-visible schema.
   */
  bindings?: Readonly<JsonObject>;
}

export type ToolPermission = 'defer' | 'allow' | 'deny';

/** A tool as the registry holds it: every field filled by `defineTool`, frozen. */
export interface Tool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Readonly<JsonObject>;
  readonly outputSchema: Readonly<JsonObject> | undefined;
  readonly handler: ToolHandler;
  readonly source: ToolSourceKind;
  readonly service: string | undefined;
  readonly readOnly: boolean;
  readonly destructive: boolean;
  readonly idempotent: boolean;
  readonly isConcurrencySafe: (args: JsonObject) => boolean;
  readonly permission: ToolPermission;
  readonly maxResultChars: number;
  readonly timeoutMs: number | undefined;
  readonly aliases: readonly string[];
  readonly deferLoading: boolean;
  readonly searchHint: string | undefined;
  readonly feature: string | undefined;
  readonly checkStructure: ((args: JsonObject) => string | undefined) | undefined;
  readonly bindings: Readonly<JsonObject> | undefined;
}

/** One call as it travels through the policy chain. Arguments are already parsed and schema-valid. */
export interface ToolCall {
  readonly callId: string;
  readonly tool: Tool;
  /** Canonical tool name (differs from the requested one when resolved through an alias). */
  readonly name: string;
  readonly arguments: JsonObject;
  readonly resolvedFrom?: string;
}

export type ToolMode = 'default' | 'readonly';

export type AccessDecision = { ok: true } | { ok: false; reason: string };

/**
 * What a policy sees besides the call. Built per call from the config snapshot the call started on. It is
 * declared here, beside ToolContext, because every layer reads it: the call path builds it, the
 * registry's `tool_search` and the code-mode tools run with it, policies decide on it.
 */
export interface PolicyContext extends ToolContext {
  /** The call's cancellation, behind `signal`: policies read and follow it without creating an AbortSignal. */
  readonly cancellation: Cancellation;
  readonly mode: ToolMode;
  /** Re-checks exposure rules (tenant allow/deny, roles, mode, source allowlists) against the call's config snapshot. */
  readonly checkAccess: (tool: Tool) => AccessDecision;
  /** Set when an approved call is resumed: the approval policy lets it through once. */
  readonly approval?: { readonly id: string; readonly approvedBy: string };
  /** Set when a code-mode script made the call (audited with it). */
  readonly script?: ScriptOrigin | undefined;
}

/** The rest of the chain from a policy's position, down to the executor. */
export type Next = (call: ToolCall, ctx: PolicyContext) => Promise<ToolResult>;
