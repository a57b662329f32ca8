// The configuration file's shape (CONTRACT §11). `schema.ts` is the JSON Schema that validates it;
// these types describe the validated, env-resolved result with relative paths made absolute.
import type { JsonObject } from '../types.js';

export interface ServerConfig {
  host: string;
  port: number;
  bodyLimit: number;
  /** Graceful shutdown: how long in-flight calls may take before they are cancelled and answered. */
  shutdownGraceMs: number;
  /** Graceful shutdown: how long readiness answers 503 while the listener still serves, before it closes. */
  drainDelayMs: number;
  /** Overload protection: authenticated requests beyond this many in flight answer 503 + Retry-After. */
  maxInFlight: number;
  /** Requests in flight on routes that need no token (docs, OpenAPI): counted apart from `maxInFlight`. */
  maxPublicInFlight: number;
  /** A request body must arrive within this long (408 TG_REQUEST_TIMEOUT otherwise). */
  bodyTimeoutMs: number;
  /** Open connections per client address; the excess is closed (0 = no bound). */
  maxConnectionsPerAddress: number;
  trustProxy: boolean;
}

export interface JwtConfig {
  secret?: string;
  publicKey?: string;
  jwksUrl?: string;
  algorithms?: string[];
  issuer?: string | string[];
  audience?: string | string[];
  tenantClaim: string;
  rolesClaim: string;
  clockToleranceSec: number;
  /** A token without `exp` is refused unless this is false (a token without `exp` never expires). */
  requireExp: boolean;
  /** Refuse tokens whose `exp - iat` (or `exp - now` without `iat`) exceeds this. */
  maxTokenLifetimeSec?: number;
}

export interface ApiKeyConfig {
  id: string;
  sha256: string;
  tenant: string;
  user: string;
  roles: string[];
  claims?: JsonObject;
}

/**
 * A global operator (reload, every upstream, accepting a changed shared tool definition): an API key by
 * its `id`, or a JWT subject of a tenant. Configured here, apart from tenant roles, so no tenant's `admin`
 * (and no token issuer's `roles` claim) can grant it.
 */
export type OperatorEntry = { apiKey: string } | { tenant: string; sub: string };

export interface AuthConfig {
  jwt?: JwtConfig;
  apiKeys: ApiKeyConfig[];
  operators: OperatorEntry[];
  /** toolgate's public URL as an OAuth protected resource (RFC 9728); the metadata routes answer only when it is set. */
  resource?: string;
  /** Where clients get tokens (issuer URLs), listed in the protected-resource metadata. */
  authorizationServers?: string[];
  scopesSupported?: string[];
  /** Verified-token cache: entries and maximum age (never past `exp`). */
  cache: { max: number; ttlMs: number };
}

/** What the rate-limit policy does while the store cannot count: admit the call uncounted, or refuse it. */
export type OnStoreUnavailable = 'fail-open' | 'fail-closed';

export type StoreConfig =
  | { kind: 'memory' }
  | {
      kind: 'redis';
      url: string;
      prefix: string;
      /** Rate limits while the store does not answer (default fail-closed); approvals and registrations always fail closed. */
      onUnavailable?: OnStoreUnavailable;
      /** Longest wait for one Redis answer (default 1000 ms). */
      commandTimeoutMs?: number;
    };

export type AuditConfig = { sink: 'stdout' } | { sink: 'file'; path: string } | { sink: 'off' };

export interface EgressConfig {
  /** Hostnames, IPs or CIDRs that user-supplied URLs may reach even when private. */
  allow: string[];
}

export interface BuiltinsConfig {
  workspaceRoot: string;
  perUser: boolean;
  readOnlyRoots: string[];
  /** Unset: bwrap where its binary is installed, otherwise none (resolved when the built-ins start). */
  sandbox?: 'none' | 'bwrap';
  /** Lets `bash` run under `sandbox: none`; refused otherwise. */
  allowUnsandboxedShell: boolean;
  limits: {
    maxReadChars: number;
    commandTimeoutMs: number;
    maxOutputBytes: number;
    maxProcesses: number;
    /** Live processes one bash command may hold; more and the whole command is killed. */
    maxProcessesPerCommand: number;
    maxFileBytes: number;
  };
}

export interface HttpToolConfig {
  method: string;
  url: string;
  headers: Record<string, string>;
  timeoutMs: number;
}

export interface ModuleFunctionEntry {
  module: string;
}

export interface HttpFunctionEntry extends ToolOverride {
  name: string;
  description: string;
  inputSchema: JsonObject;
  http: HttpToolConfig;
}

export type FunctionEntry = ModuleFunctionEntry | HttpFunctionEntry;

export interface RagEntry {
  name: string;
  description: string;
  dataset?: string;
  backend:
    | { kind: 'embedded'; documents: string }
    | { kind: 'http'; url: string; headers: Record<string, string>; timeoutMs: number };
  topK: { default: number; max: number };
  filter: Record<string, unknown>;
  maxResultChars?: number;
}

export interface McpStdioEntry {
  transport: 'stdio';
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
}

export interface McpRemoteEntry {
  transport: 'streamable-http' | 'sse';
  url: string;
  headers: Record<string, string>;
}

export type McpLocalEntry = { service: string; lazy?: boolean; required?: boolean } & (
  | { module: string }
  | McpStdioEntry
);

export type McpGlobalEntry = {
  id: string;
  required: boolean;
  lazy?: boolean;
  defer: boolean;
  pin: boolean;
  prefix?: boolean | string;
  forwardIdentity: Record<string, string>;
  timeoutMs?: number;
} & (McpStdioEntry | McpRemoteEntry);

/** One OpenAPI document whose operations become function tools (`openapi:` in config). */
export interface OpenApiEntry {
  /** Prefix of the tool names (`<name>_<operationId>`) and the service id `openapi:<name>`. */
  name: string;
  /** A local file (absolute after loading)… */
  spec?: string;
  /** …or an http(s) URL, fetched through the egress guard. Exactly one of the two. */
  url?: string;
  /** Default: the document's first server. */
  baseUrl?: string;
  /** operationId or tag globs; default every operation. */
  include: string[];
  exclude: string[];
  /** The service's own credentials, sent with every call (never the caller's). */
  headers: Record<string, string>;
  timeoutMs: number;
  maxResultChars?: number;
  /** Deferred listing; default: deferred when the entry imports more than 50 operations. */
  defer?: boolean;
}

export interface ToolOverride {
  readOnly?: boolean;
  destructive?: boolean;
  idempotent?: boolean;
  concurrencySafe?: boolean;
  aliases?: string[];
  deferLoading?: boolean;
  searchHint?: string;
  maxResultChars?: number;
  timeoutMs?: number;
  feature?: string;
  description?: string;
}

export interface TenantConfig {
  tools: { allow: string[]; deny: string[] };
  mcpServices: string[];
  /** Function tool allowlist (names or globs); default every function tool. */
  functions: string[];
  builtins: string[] | 'all';
  mode: 'default' | 'readonly';
  roles: Record<string, { allow?: string[]; deny?: string[] }>;
  bindings: Record<string, JsonObject>;
  policies: Record<string, unknown>;
  limits: { maxInFlight: number };
  /** Deferred loading kicks in automatically once the pool holds more tools than this. */
  deferThreshold?: number;
  userMcp: { enabled: boolean; maxServers: number };
  /** Named subsets of the tenant's pool (virtual servers): `/mcp/<name>`, `?toolset=<name>`. */
  toolsets: Record<string, { description: string; tools: string[] }>;
}

export interface GatewayConfig {
  /** Folder of the config file: relative paths resolve against it. */
  baseDir: string;
  /** Path of the loaded file, or undefined for the embedded demo. */
  source: string | undefined;
  server: ServerConfig;
  auth: AuthConfig;
  store: StoreConfig;
  audit: AuditConfig;
  features: Record<string, boolean>;
  egress: EgressConfig;
  builtins: BuiltinsConfig;
  functions: FunctionEntry[];
  rag: RagEntry[];
  openapi: OpenApiEntry[];
  mcp: { local: McpLocalEntry[]; global: McpGlobalEntry[] };
  tools: Record<string, ToolOverride>;
  tenants: Record<string, TenantConfig>;
  logging: { level: string; redact: string[] };
  reload: { watch: boolean };
  /**
   * Prometheus metrics cover every tenant: served on their own listener (`host`/`port`, off with
   * `enabled: false`) and, only when `token` is set, on the API port to a caller presenting it.
   */
  metrics: { enabled: boolean; host: string; port: number; token?: string; durationBuckets?: number[] };
  /** The operator console at /console/ (static files built into dist/console); off answers 404. */
  console: { enabled: boolean };
  /**
   * Admin API: `auditRecent` audit events kept per tenant in the state store for GET /v1/admin/audit
   * (0 = none; the audit sink stays the system of record); at most `maxKeysPerTenant` runtime API keys.
   */
  admin: { auditRecent: number; maxKeysPerTenant: number };
}
