// Core types shared by every layer: exposure (registry), structure (sanitizer),
// governance (policies) and execution (executors). Kept dependency-free on purpose: the imports are
// the ToolResult schema and the cancellation type, both dependency-free.
import type { FastifyBaseLogger } from 'fastify';
import type { ToolResult, ToolSourceKind } from './schemas/tool-result.js';
import type { Cancellation } from './shared/cancellation.js';

export type JsonObject = Record<string, unknown>;

// The ToolResult and the enums it carries: one source, its schema (src/schemas/tool-result.ts).
export { ERROR_TYPES, SOURCE_PRECEDENCE, type ErrorType, type ToolFailure, type ToolResult, type ToolSourceKind } from './schemas/tool-result.js';

/** A verified caller. Built only from a verified token, never from headers or body fields. */
export interface Principal {
  readonly tenant: string;
  /** The raw `sub` claim (or the API key's configured user). */
  readonly user: string;
  readonly roles: readonly string[];
  /** Every verified claim, for server-side bindings (`${claims.NAME}`). */
  readonly claims: Readonly<Record<string, unknown>>;
  /** A global operator (`auth.operators`): may reload and run other gateway-wide admin operations. */
  readonly operator?: boolean;
  /** The credential the token was; absent for principals rebuilt from a stored record (an approved call). */
  readonly credential?: Credential;
}

/**
 * The credential behind a principal. A runtime key names the chain of credentials that minted it, creator
 * first: the key lives only while every one of them does, and everyone on the chain held the key
 * (docs/security-model.md#runtime-keys).
 */
export type Credential =
  | { readonly kind: 'jwt' }
  | { readonly kind: 'apiKey'; readonly id: string; readonly sha256: string }
  | { readonly kind: 'runtimeKey'; readonly id: string; readonly sha256: string; readonly issuers: readonly KeyIssuer[] };

/** One link of a runtime key's chain of creators: who minted it and with which credential. */
export type KeyIssuer =
  | { readonly user: string; readonly kind: 'jwt' }
  | { readonly user: string; readonly kind: 'apiKey' | 'runtimeKey'; readonly id: string; readonly sha256: string };

export type Logger = FastifyBaseLogger;

/** Which identity an upstream call carried (docs/security-model.md#upstream-identity). */
export type UpstreamCredentialKind = 'service' | 'user' | 'exchanged';

/** The credential one upstream request carries: the header value, and what audit and traces may say of it. */
export interface UpstreamCredential {
  readonly authorization: string;
  readonly kind: UpstreamCredentialKind;
  /** The first 12 hex characters of the token's SHA-256: tells tokens apart in audit without revealing one. */
  readonly tokenHash: string;
}

/** The credentials of one upstream service with an `auth` object. Failures are ToolErrors (CONNECTION_REQUIRED…). */
export interface ServiceCredentials {
  /** The credential of a call made by this principal. */
  forCall(principal: Principal, signal: AbortSignal): Promise<UpstreamCredential>;
  /** The service's own credential for traffic outside a call (an MCP session's initialize and listing), if it has one. */
  forSession(): Promise<UpstreamCredential | undefined>;
}

/** What a tool handler receives besides its arguments. */
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
 * declared here, beside ToolContext, because every layer reads it: the execution path builds it, the
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
