// The configuration file's JSON Schema (docs/configuration.md), written with TypeBox so the schema ajv
// validates is also the type the code reads (types.ts derives every config type from it). ajv fills
// defaults, so a key with a `default` is optional in the file but always present after validation.
// Unknown keys are refused: a typo must stop start-up, not be ignored.
import { Type, type Static, type TObject, type TObjectOptions, type TProperties, type TSchema, type TSchemaOptions, type TUnion, type TUnsafe } from 'typebox';
import { BudgetSchema, ToolCostsSchema, type ToolCost } from './budget-schema.js';
import type { JsonObject } from '../call/types.js';
import { GuardrailsSchema } from './guardrails.js';

/**
 * A closed object (unknown keys refused). Keys with a `default` are left out of `required`, since ajv
 * fills them; the static type keeps them required, as the validated config always has them.
 */
function Section<P extends TProperties>(properties: P, options: TObjectOptions = {}): TObject<P> {
  const inFile: TProperties = {};
  for (const [key, schema] of Object.entries(properties)) inFile[key] = 'default' in schema ? Type.Optional(schema) : schema;
  return Type.Object(inFile, { additionalProperties: false, ...options }) as TObject<P>;
}

/**
 * `oneOf`, not TypeBox's `anyOf`: load.ts explains a failed `oneOf` through its branches' errors, and
 * exactly one branch may match. A branch leaves to the parent what the parent already says (`type`,
 * required keys), so a bad entry is explained once, not once per branch.
 */
function OneOf<T extends TSchema[]>(branches: [...T], options: TSchemaOptions & { type?: 'object'; required?: string[] } = {}): TUnsafe<Static<TUnion<T>>> {
  const known = new Set(options.required);
  const trimmed = branches.map((branch) => {
    if (options.type !== 'object' || !Type.IsObject(branch)) return branch;
    const { type: _type, required = [], ...rest } = branch;
    const own = required.filter((key) => !known.has(key));
    return own.length > 0 ? { ...rest, required: own } : rest;
  });
  return Type.Unsafe<Static<TUnion<T>>>({ ...options, oneOf: trimmed });
}

/** One exact value (a `kind` or `transport` tag); just `const`, as a type beside it adds nothing. */
const Const = <V extends string>(value: V): TUnsafe<V> => Type.Unsafe<V>({ const: value });

/** A map with free keys. `additionalProperties` rather than `Type.Record`'s pattern `^.*$`, which skips keys holding a newline. */
function Dict<T extends TSchema>(values: T, options: TSchemaOptions = {}): TUnsafe<Record<string, Static<T>>> {
  return Type.Unsafe<Record<string, Static<T>>>({ type: 'object', ...options, additionalProperties: values });
}

/** Any JSON object (a tool's input schema, RAG filters, claims): checked by whoever reads it. */
const AnyObject = (options: TSchemaOptions = {}): TUnsafe<JsonObject> => Type.Unsafe<JsonObject>({ type: 'object', ...options });

const stringArray = (options: TSchemaOptions = {}) => Type.Array(Type.String(), options);
const stringMap = (options: TSchemaOptions = {}) => Dict(Type.String(), options);
const nameList = (options: TSchemaOptions = {}) => Type.Array(Type.String({ minLength: 1 }), options);
const httpUrl = () => Type.String({ pattern: '^https?://' });
const toolName = () => Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' });
const serviceId = () => Type.String({ pattern: '^[A-Za-z0-9_-]{1,48}$' });
const timeoutMs = () => Type.Integer({ minimum: 1, maximum: 600000, default: 10000 });

/** OTEL_TRACES_SAMPLER's values that toolgate takes (the OpenTelemetry SDK's built-in samplers). */
export const TRACE_SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const;

/** Defaults of a code-mode toolset's `sandbox` limits (docs/code-mode.md#limits). */
export const SANDBOX_DEFAULTS = Object.freeze({
  wallTimeMs: 30_000,
  cpuTimeMs: 250,
  memoryBytes: 32 * 1024 * 1024,
  stackBytes: 256 * 1024,
  maxToolCalls: 100,
  maxParallel: 4,
  maxResultBytes: 64 * 1024,
  maxLogBytes: 16 * 1024,
});

export const serverSchema = Section({
  host: Type.String({ default: '0.0.0.0' }),
  port: Type.Integer({ minimum: 0, maximum: 65535, default: 8080 }),
  bodyLimit: Type.Integer({ minimum: 1024, default: 1048576 }),
  /** Graceful shutdown: how long in-flight calls may take before they are cancelled and answered. */
  shutdownGraceMs: Type.Integer({ minimum: 0, default: 10000 }),
  /** Graceful shutdown: how long readiness answers 503 while the listener still serves, before it closes. */
  drainDelayMs: Type.Integer({ minimum: 0, default: 0 }),
  /** Overload protection: authenticated requests beyond this many in flight answer 503 + Retry-After. */
  maxInFlight: Type.Integer({ minimum: 1, default: 1024 }),
  /** Requests in flight on routes that need no token (docs, OpenAPI): counted apart from `maxInFlight`. */
  maxPublicInFlight: Type.Integer({ minimum: 1, default: 64 }),
  /** A request body must arrive within this long (408 TG_REQUEST_TIMEOUT otherwise). */
  bodyTimeoutMs: Type.Integer({ minimum: 100, maximum: 600000, default: 10000 }),
  /** Open connections per client address; the excess is closed (0 = no bound). */
  maxConnectionsPerAddress: Type.Integer({ minimum: 0, default: 256 }),
  trustProxy: Type.Boolean({ default: false }),
  /**
   * Load shedding (docs/operations.md#load-shedding): while the event loop's mean delay or its utilisation is
   * over a bound, requests answer 503 + Retry-After at once and /readyz says `shedding`, so an overloaded
   * replica refuses early instead of answering everyone late. 0 leaves a bound off; both off by default.
   */
  loadShedding: Section({
    maxEventLoopDelayMs: Type.Integer({ minimum: 0, maximum: 60000, default: 0 }),
    maxEventLoopUtilization: Type.Number({ minimum: 0, maximum: 1, default: 0 }),
    /** How often the event loop is sampled. */
    sampleIntervalMs: Type.Integer({ minimum: 10, maximum: 10000, default: 500 }),
    retryAfterSec: Type.Integer({ minimum: 1, maximum: 300, default: 2 }),
  }, { default: {} }),
  /**
   * toolgate's public base URL (scheme, host, optional path): the OAuth redirect URI of upstream
   * connections is `<publicUrl>/oauth/callback`. Configured, never derived from a request's Host header.
   */
  publicUrl: Type.Optional(Type.String({ pattern: '^https?://[^?#]+[^/?#]$' })),
}, { default: {} });

const stringOrList = () => OneOf([Type.String(), stringArray()]);

export const jwtSchema = Section({
  secret: Type.Optional(Type.String({ minLength: 32 })),
  publicKey: Type.Optional(Type.String()),
  jwksUrl: Type.Optional(httpUrl()),
  algorithms: Type.Optional(Type.Array(Type.Enum(['HS256', 'HS384', 'HS512', 'RS256', 'RS384', 'RS512', 'PS256', 'ES256', 'ES384', 'EdDSA']))),
  issuer: Type.Optional(stringOrList()),
  audience: Type.Optional(stringOrList()),
  tenantClaim: Type.String({ default: 'tenant' }),
  rolesClaim: Type.String({ default: 'roles' }),
  /** Skew allowed between the issuer's clock and ours, in seconds, when `exp` and `nbf` are checked (by jose). */
  clockToleranceSec: Type.Integer({ minimum: 0, maximum: 300, default: 30 }),
  /** A token without `exp` is refused unless this is false (a token without `exp` never expires). */
  requireExp: Type.Boolean({ default: true }),
  /**
   * Refuse tokens whose `exp` lies further than this from `iat` (or from now, when `iat` is missing or in
   * the future). 24 h by default: longer than the access tokens identity providers issue by default
   * (minutes to a day), short enough that a leaked token is not a standing credential.
   */
  maxTokenLifetimeSec: Type.Integer({ minimum: 1, default: 86_400 }),
});

export const apiKeySchema = Section({
  id: Type.String({ minLength: 1 }),
  sha256: Type.String({ pattern: '^[0-9a-fA-F]{64}$' }),
  tenant: Type.String({ minLength: 1 }),
  user: Type.String({ minLength: 1 }),
  roles: stringArray({ default: [] }),
  claims: Type.Optional(AnyObject()),
});

/**
 * A global operator (reload, every upstream, accepting a changed shared tool definition): an API key by
 * its `id`, or a JWT subject of a tenant. Configured here, apart from tenant roles, so no tenant's `admin`
 * (and no token issuer's `roles` claim) can grant it.
 */
export const operatorSchema = OneOf([
  Section({ apiKey: Type.String({ minLength: 1 }) }),
  Section({ tenant: Type.String({ minLength: 1 }), sub: Type.String({ minLength: 1 }) }),
]);

export const authSchema = Section({
  jwt: Type.Optional(jwtSchema),
  apiKeys: Type.Array(apiKeySchema, { default: [] }),
  operators: Type.Array(operatorSchema, { default: [] }),
  /** The protected-resource metadata routes answer only when this is set. */
  resource: Type.Optional(Type.String({ pattern: '^https?://[^?#]+$', description: "toolgate's public URL as an OAuth protected resource (RFC 9728)" })),
  /** Where clients get tokens (issuer URLs), listed in the protected-resource metadata. */
  authorizationServers: Type.Array(httpUrl(), { default: [] }),
  scopesSupported: stringArray({ default: [] }),
  /** Verified-token cache: entries and maximum age (never past `exp`). */
  cache: Section({
    max: Type.Integer({ minimum: 0, default: 10000 }),
    ttlMs: Type.Integer({ minimum: 0, default: 60000 }),
  }, { default: {} }),
}, { default: {} });

/** What the rate-limit policy does while the store cannot count: admit the call uncounted, or refuse it. */
export const onStoreUnavailableSchema = Type.Enum(['fail-open', 'fail-closed'], { default: 'fail-closed' });

/** PEM files for a TLS connection to Redis (`rediss://` turns TLS on; these add trust and a client certificate). */
export const redisTlsSchema = Section({
  /** CA bundle the server's certificate must chain to (instead of the system's CAs). */
  ca: Type.Optional(Type.String({ minLength: 1 })),
  /** Client certificate and its key, for servers that require one (mutual TLS). */
  cert: Type.Optional(Type.String({ minLength: 1 })),
  key: Type.Optional(Type.String({ minLength: 1 })),
  /** The name the server's certificate must carry (SNI), when it differs from the host connected to. */
  servername: Type.Optional(Type.String({ minLength: 1 })),
});

const redisUrl = () => Type.String({ pattern: '^rediss?://' });

/**
 * What every Redis topology shares. The prefix holds no `{` or `}`: the store places hash tags itself
 * (docs/architecture.md#state-store), and a brace in the prefix would move every key's slot.
 */
const redisCommon = {
  kind: Const('redis'),
  prefix: Type.String({ default: 'toolgate:', pattern: '^[^{}]*$' }),
  tls: Type.Optional(redisTlsSchema),
  /** Rate limits while Redis does not answer (approvals and registrations always fail closed). */
  onUnavailable: onStoreUnavailableSchema,
  /** Longest wait for one Redis answer. */
  commandTimeoutMs: Type.Integer({ minimum: 50, maximum: 60000, default: 1000 }),
};

/** One Redis server, by URL. */
export const redisServerStoreSchema = Section({ ...redisCommon, url: redisUrl() });
/** Redis Cluster: the nodes to discover it from (the rest are found through them). */
export const redisClusterStoreSchema = Section({
  ...redisCommon,
  cluster: Section({ nodes: Type.Array(redisUrl(), { minItems: 1 }) }),
});
/** A master watched by Sentinels, which name the current master after a failover. */
export const redisSentinelStoreSchema = Section({
  ...redisCommon,
  sentinel: Section({
    /** The master's name in the Sentinels' configuration. */
    name: Type.String({ minLength: 1 }),
    sentinels: Type.Array(Type.String({ pattern: '^[^\\s:]+:[0-9]{1,5}$' }), { minItems: 1 }),
    /** The master's (and replicas') AUTH, as a URL would carry it. */
    username: Type.Optional(Type.String({ minLength: 1 })),
    password: Type.Optional(Type.String({ minLength: 1 })),
    /** The Sentinels' own AUTH, when they require one. */
    sentinelPassword: Type.Optional(Type.String({ minLength: 1 })),
  }),
});

/** `memory`, or `redis` with exactly one of `url`, `cluster` and `sentinel` (each branch is closed). */
export const storeSchema = OneOf([
  Section({ kind: Const('memory') }),
  redisServerStoreSchema,
  redisClusterStoreSchema,
  redisSentinelStoreSchema,
], { type: 'object', default: { kind: 'memory' }, required: ['kind'] });

/** Where signed checkpoints of the audit chains go: a second place, apart from the audit log itself. */
export const auditCheckpointSinkSchema = OneOf([
  Section({ sink: Const('file'), path: Type.String({ minLength: 1 }) }),
  Section({
    sink: Const('http'),
    /** POSTed as JSON lines (application/x-ndjson); the verifier reads the same URL with GET. */
    url: Type.String({ pattern: '^https?://' }),
    /** Longest a POST may take (default 5000); a checkpoint never waits on the call path. */
    timeoutMs: Type.Optional(Type.Integer({ minimum: 1, maximum: 60000 })),
  }),
  Section({
    sink: Const('store'),
    /** Newest checkpoints kept per tenant (and for the gateway-wide chains) in the state store (default 10000). */
    keep: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000000 })),
  }),
], { type: 'object', required: ['sink'] });

/** An Ed25519 private key (PEM) and the id its checkpoints name; the first key signs, the others are kept for publishing. */
const auditSigningKeySchema = Section({
  id: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9._-]+$' }),
  privateKey: Type.String({ minLength: 1 }),
});

/** Hash-chained audit events with signed checkpoints (docs/operations.md#tamper-evident-audit). */
export const auditChainSchema = Section({
  checkpointEvery: Type.Integer({ minimum: 1, maximum: 1000000, default: 1000 }),
  checkpointSeconds: Type.Number({ exclusiveMinimum: 0, maximum: 86400, default: 10 }),
  checkpoints: Type.Optional(auditCheckpointSinkSchema),
  signing: Type.Optional(Section({ keys: Type.Array(auditSigningKeySchema, { minItems: 1 }) })),
});

export const auditSchema = OneOf([
  Section({ sink: Type.Enum(['stdout', 'off']), chain: Type.Optional(auditChainSchema) }),
  Section({ sink: Const('file'), path: Type.String(), chain: Type.Optional(auditChainSchema) }),
], { type: 'object', default: { sink: 'stdout' }, required: ['sink'] });

export const egressSchema = Section({
  /** Hostnames, IPs or CIDRs that user-supplied URLs may reach even when private. */
  allow: stringArray({ default: [] }),
}, { default: {} });

export const builtinsSchema = Section({
  workspaceRoot: Type.String({ default: './workspaces' }),
  perUser: Type.Boolean({ default: false }),
  readOnlyRoots: stringArray({ default: [] }),
  /** No default: the built-ins pick bwrap where its binary is installed, otherwise none. */
  sandbox: Type.Optional(Type.Enum(['none', 'bwrap'])),
  /** Lets `bash` run under `sandbox: none`; refused otherwise. */
  allowUnsandboxedShell: Type.Boolean({ default: false }),
  limits: Section({
    maxReadChars: Type.Integer({ minimum: 1, default: 12000 }),
    commandTimeoutMs: Type.Integer({ minimum: 1, default: 30000 }),
    maxOutputBytes: Type.Integer({ minimum: 1, default: 10485760 }),
    maxProcesses: Type.Integer({ minimum: 0, default: 8 }),
    /** Live processes one bash command may hold; more and the whole command is killed. */
    maxProcessesPerCommand: Type.Integer({ minimum: 1, default: 128 }),
    maxFileBytes: Type.Integer({ minimum: 1, default: 10485760 }),
  }, { default: {} }),
}, { default: {} });

/** Per-tool overrides (`tools:` by name or glob), also accepted on an HTTP function entry. */
export const toolOverrideSchema = Section({
  readOnly: Type.Optional(Type.Boolean()),
  destructive: Type.Optional(Type.Boolean()),
  idempotent: Type.Optional(Type.Boolean()),
  concurrencySafe: Type.Optional(Type.Boolean()),
  aliases: Type.Optional(Type.Array(toolName())),
  deferLoading: Type.Optional(Type.Boolean()),
  searchHint: Type.Optional(Type.String({ maxLength: 200 })),
  maxResultChars: Type.Optional(Type.Integer({ minimum: 1 })),
  timeoutMs: Type.Optional(Type.Integer({ minimum: 1 })),
  feature: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
});

export const httpToolSchema = Section({
  method: Type.Enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE'], { type: 'string', default: 'POST' }),
  url: httpUrl(),
  headers: stringMap({ default: {} }),
  timeoutMs: timeoutMs(),
});

export const moduleFunctionSchema = Section({ module: Type.String({ minLength: 1 }) });

export const httpFunctionSchema = Section({
  ...toolOverrideSchema.properties,
  name: toolName(),
  description: Type.String({ default: '' }),
  inputSchema: AnyObject({ default: { type: 'object', properties: {} } }),
  http: httpToolSchema,
});

export const ragSchema = Section({
  name: toolName(),
  description: Type.String({ default: 'Search the knowledge base' }),
  dataset: Type.Optional(Type.String()),
  backend: OneOf([
    Section({ kind: Const('embedded'), documents: Type.String() }),
    Section({
      kind: Const('http'),
      url: httpUrl(),
      headers: stringMap({ default: {} }),
      timeoutMs: Type.Integer({ minimum: 1, default: 10000 }),
    }),
  ], { type: 'object', required: ['kind'] }),
  topK: Section({
    default: Type.Integer({ minimum: 1, default: 5 }),
    max: Type.Integer({ minimum: 1, default: 20 }),
  }, { default: {} }),
  filter: AnyObject({ default: {} }),
  maxResultChars: Type.Optional(Type.Integer({ minimum: 1 })),
});

/**
 * How toolgate authenticates to one upstream (docs/configuration.md#upstream-identity): an OAuth client
 * of an authorization server, found by `issuer` (RFC 8414 / OIDC discovery) or by explicit endpoints.
 */
export const upstreamAuthSchema = Section({
  type: Type.Enum(['clientCredentials', 'tokenExchange', 'userOAuth'], { type: 'string' }),
  issuer: Type.Optional(httpUrl()),
  authorizationUrl: Type.Optional(httpUrl()),
  tokenUrl: Type.Optional(httpUrl()),
  /** RFC 7009 revocation endpoint (discovery fills it when the issuer offers one). */
  revocationUrl: Type.Optional(httpUrl()),
  /**
   * A remote MCP service without `issuer` or `tokenUrl`: the authorization servers its metadata may name
   * (matched exactly). Required when toolgate sends that server a credential of its own (tokenExchange's
   * subject token, a `clientSecret`).
   */
  trustedIssuers: Type.Optional(Type.Array(httpUrl(), { minItems: 1 })),
  /** Required unless the service's discovered authorization server registers toolgate (RFC 7591). */
  clientId: Type.Optional(Type.String({ minLength: 1 })),
  clientSecret: Type.Optional(Type.String({ minLength: 1 })),
  scopes: stringArray({ default: [] }),
  /** RFC 8707 resource indicator sent with every token request. */
  resource: Type.Optional(Type.String({ minLength: 1 })),
  /** `audience` parameter (RFC 8693, and authorization servers that take one instead of `resource`). */
  audience: Type.Optional(Type.String({ minLength: 1 })),
  /** Longest wait for one answer of the authorization server. */
  timeoutMs: Type.Integer({ minimum: 100, maximum: 60000, default: 5000 }),
});

// A document is either `spec` (a file) or `url`; load.ts checks that exactly one is given so the
// message names the entry (a oneOf here would only say "must match exactly one schema").
/** One OpenAPI document whose operations become function tools (`openapi:` in config). */
export const openApiSchema = Section({
  /** Prefix of the tool names (`<name>_<operationId>`) and the service id `openapi:<name>`. */
  name: Type.String({ pattern: '^[A-Za-z][A-Za-z0-9_-]{0,31}$' }),
  /** A local file (absolute after loading)… */
  spec: Type.Optional(Type.String({ minLength: 1 })),
  /** …or an http(s) URL, fetched through the egress guard. Exactly one of the two. */
  url: Type.Optional(httpUrl()),
  /** Default: the document's first server. */
  baseUrl: Type.Optional(httpUrl()),
  /** operationId or tag globs; default every operation. */
  include: nameList({ default: ['*'] }),
  exclude: nameList({ default: [] }),
  /** The service's own credentials, sent with every call (never the caller's). */
  headers: stringMap({ default: {} }),
  timeoutMs: timeoutMs(),
  maxResultChars: Type.Optional(Type.Integer({ minimum: 1 })),
  /** Deferred listing; default: deferred when the entry imports more than 50 operations. */
  defer: Type.Optional(Type.Boolean()),
  /** Per-call OAuth credentials (docs/configuration.md#upstream-identity), beside the static `headers`. */
  auth: Type.Optional(upstreamAuthSchema),
});

export const mcpStdioSchema = Section({
  transport: Const('stdio'),
  command: Type.String({ minLength: 1 }),
  args: stringArray({ default: [] }),
  env: stringMap({ default: {} }),
  cwd: Type.Optional(Type.String()),
});

export const mcpRemoteSchema = Section({
  transport: Type.Enum(['streamable-http', 'sse']),
  url: httpUrl(),
  headers: stringMap({ default: {} }),
});

/** A global remote service: the remote transport plus its OAuth credentials (docs/configuration.md#upstream-identity). */
export const mcpGlobalRemoteSchema = Section({ ...mcpRemoteSchema.properties, auth: Type.Optional(upstreamAuthSchema) });

const localCommon = {
  service: serviceId(),
  lazy: Type.Optional(Type.Boolean()),
  required: Type.Optional(Type.Boolean()),
};

export const mcpLocalSchema = OneOf([
  Section({ ...localCommon, module: Type.String() }),
  Section({ ...localCommon, ...mcpStdioSchema.properties }),
], { type: 'object', required: ['service'] });

const globalCommon = {
  id: serviceId(),
  required: Type.Boolean({ default: false }),
  lazy: Type.Optional(Type.Boolean()),
  defer: Type.Boolean({ default: false }),
  pin: Type.Boolean({ default: true }),
  prefix: Type.Optional(OneOf([Type.Boolean(), Type.String({ pattern: '^[A-Za-z0-9_-]{1,32}$' })])),
  forwardIdentity: stringMap({ default: {} }),
  timeoutMs: Type.Optional(Type.Integer({ minimum: 1 })),
};

export const mcpGlobalSchema = OneOf([
  Section({ ...globalCommon, ...mcpStdioSchema.properties }),
  Section({ ...globalCommon, ...mcpGlobalRemoteSchema.properties }),
], { type: 'object', required: ['id', 'transport'] });

/**
 * `tenants.<t>.cedar` (docs/governance.md#cedar-policies): a policy set inline or from files, the claims
 * of the token the operator exposes to policies (name → Cedar type), and what a request no policy
 * decides gets (`deny`, Cedar's own rule, or `permit`: only `forbid` policies then narrow).
 */
const cedarCommon = {
  claims: Dict(Type.Enum(['String', 'Long', 'Boolean', 'Set<String>']), { default: {}, propertyNames: { pattern: '^[A-Za-z_][A-Za-z0-9_]{0,63}$' }, maxProperties: 64 }),
  default: Type.Enum(['deny', 'permit'], { default: 'deny' }),
};
export const cedarSchema = OneOf([
  Section({ ...cedarCommon, policies: Type.String({ maxLength: 262_144 }) }),
  Section({ ...cedarCommon, files: Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: 64 }) }),
], { type: 'object' });

export const tenantSchema = Section({
  tools: Section({ allow: nameList({ default: ['*'] }), deny: nameList({ default: [] }) }, { default: {} }),
  mcpServices: nameList({ default: [] }),
  /** Function tool allowlist (names or globs); default every function tool. */
  functions: nameList({ default: ['*'] }),
  builtins: OneOf([Const('all'), nameList()], { default: [] }),
  mode: Type.Enum(['default', 'readonly'], { default: 'default' }),
  roles: Dict(Section({ allow: Type.Optional(nameList()), deny: Type.Optional(nameList()) }), { default: {} }),
  bindings: Dict(AnyObject(), { default: {} }),
  /** Budgets and quotas on tool calls, and what each tool costs (docs/governance.md#budgets). */
  budgets: Type.Array(BudgetSchema, { maxItems: 32, default: [] }),
  toolCosts: Type.Unsafe<Record<string, ToolCost>>({ ...ToolCostsSchema, default: {} }),
  /** Options per policy; each policy checks its own (src/pipeline). */
  policies: Type.Unsafe<Record<string, unknown>>({ type: 'object', default: {} }),
  /** Guardrails on arguments and results (docs/governance.md#guardrails); absent: the gateway's `guardrails`, `false`: none. */
  guardrails: Type.Optional(GuardrailsSchema),
  limits: Section({ maxInFlight: Type.Integer({ minimum: 1, default: 64 }) }, { default: {} }),
  /**
   * What an upstream MCP server may ask the tenant's MCP callers while serving their call (docs/mcp.md#elicitation-and-sampling):
   * elicitation (a question for the user) is on, sampling (a model completion on the caller's account) off.
   */
  mcp: Section({
    relay: Section({ elicitation: Type.Boolean({ default: true }), sampling: Type.Boolean({ default: false }) }, { default: {} }),
  }, { default: {} }),
  /** Deferred loading kicks in automatically once the pool holds more tools than this. */
  deferThreshold: Type.Optional(Type.Integer({ minimum: 1 })),
  userMcp: Section({
    enabled: Type.Boolean({ default: true }),
    maxServers: Type.Integer({ minimum: 0, default: 10 }),
    // What a user's own servers may list (docs/security-model.md#user-catalog-bounds).
    maxToolsPerServer: Type.Integer({ minimum: 0, default: 200 }),
    maxDescriptionChars: Type.Integer({ minimum: 1, default: 2048 }),
    maxSchemaBytes: Type.Integer({ minimum: 1, default: 32_768 }),
    maxCatalogBytes: Type.Integer({ minimum: 1, default: 524_288 }),
  }, { default: {} }),
  /**
   * Resources and prompts of the MCP services the tenant reaches, narrowed by globs over their namespaced
   * names (`*` spans any characters, `/` included); a read or a prompt is capped at its max chars.
   */
  resources: Section({ allow: nameList({ default: ['*'] }), deny: nameList({ default: [] }), maxReadChars: Type.Integer({ minimum: 1, default: 100000 }) }, { default: {} }),
  prompts: Section({ allow: nameList({ default: ['*'] }), deny: nameList({ default: [] }), maxResultChars: Type.Integer({ minimum: 1, default: 100000 }) }, { default: {} }),
  /** Named subsets of the tenant's pool (virtual servers): `/mcp/<name>`, `?toolset=<name>`. */
  toolsets: Dict(Section({
    description: Type.String({ default: '' }),
    tools: nameList(),
    /** `code`: the toolset is served as search_tools, describe_tools and run_script (docs/code-mode.md). */
    mode: Type.Enum(['tools', 'code'], { default: 'tools' }),
    /** Limits of each run_script (docs/code-mode.md#limits); code mode only. */
    sandbox: Section({
      wallTimeMs: Type.Integer({ minimum: 100, maximum: 300_000, default: SANDBOX_DEFAULTS.wallTimeMs }),
      cpuTimeMs: Type.Integer({ minimum: 10, maximum: 10_000, default: SANDBOX_DEFAULTS.cpuTimeMs }),
      memoryBytes: Type.Integer({ minimum: 1024 * 1024, maximum: 1024 * 1024 * 1024, default: SANDBOX_DEFAULTS.memoryBytes }),
      stackBytes: Type.Integer({ minimum: 16 * 1024, maximum: 8 * 1024 * 1024, default: SANDBOX_DEFAULTS.stackBytes }),
      maxToolCalls: Type.Integer({ minimum: 1, maximum: 10_000, default: SANDBOX_DEFAULTS.maxToolCalls }),
      maxParallel: Type.Integer({ minimum: 1, maximum: 64, default: SANDBOX_DEFAULTS.maxParallel }),
      maxResultBytes: Type.Integer({ minimum: 1, maximum: 16 * 1024 * 1024, default: SANDBOX_DEFAULTS.maxResultBytes }),
      maxLogBytes: Type.Integer({ minimum: 0, maximum: 16 * 1024 * 1024, default: SANDBOX_DEFAULTS.maxLogBytes }),
    }, { default: {} }),
  }), {
    default: {},
    propertyNames: { pattern: '^[A-Za-z0-9_-]{1,64}$' },
  }),
  /** Cedar policies decided at listing and at execution (docs/governance.md#cedar-policies). */
  cedar: Type.Optional(cedarSchema),
});

/** `tenants` as a mapping: its ids' bounds and default. */
const TENANT_IDS: TSchemaOptions = { default: {}, propertyNames: { type: 'string', minLength: 1, maxLength: 128 } };
/** `tenants` with its ids checked and each tenant not: src/config/load.ts checks every tenant with the one-tenant schema. */
export const tenantIdsSchema = AnyObject(TENANT_IDS);

export const configSchema = Section({
  server: serverSchema,
  auth: authSchema,
  store: storeSchema,
  audit: auditSchema,
  features: Dict(Type.Boolean(), { default: {} }),
  egress: egressSchema,
  builtins: builtinsSchema,
  functions: Type.Array(OneOf([moduleFunctionSchema, httpFunctionSchema]), { default: [] }),
  rag: Type.Array(ragSchema, { default: [] }),
  openapi: Type.Array(openApiSchema, { default: [] }),
  mcp: Section({
    local: Type.Array(mcpLocalSchema, { default: [] }),
    global: Type.Array(mcpGlobalSchema, { default: [] }),
  }, { default: {} }),
  tools: Dict(toolOverrideSchema, { default: {} }),
  /**
   * Keys of the credential vault (AES-256-GCM, 32 bytes base64 each) that keeps upstream tokens at rest:
   * the first encrypts, every one decrypts, so a new key goes first and an old one stays until rotated out.
   */
  credentials: Section({
    keys: Type.Array(Section({ id: Type.String({ pattern: '^[A-Za-z0-9_-]{1,32}$' }), key: Type.String({ minLength: 1 }) }), { default: [] }),
  }, { default: {} }),
  tenants: Dict(tenantSchema, TENANT_IDS),
  /** The guardrails of every tenant that sets none of its own (docs/governance.md#guardrails). */
  guardrails: Type.Optional(GuardrailsSchema),
  /**
   * Tenants as data (docs/configuration.md#tenants-as-data): tenants created through the tenant API live in the
   * state store; each replica compiles a tenant when its first request arrives and keeps at most
   * `compiledCacheSize` compiled; a compiled tenant from the store is checked against it every `revalidateMs`
   * (a change message missed on the bus heals then). `tenantAdmins`: what a tenant's own `admin` may do with its
   * tenant through the API — `read` it, or also `narrow` it (never widen what the operator set).
   */
  tenancy: Section({
    compiledCacheSize: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 10_000 }),
    revalidateMs: Type.Integer({ minimum: 1000, maximum: 3_600_000, default: 30_000 }),
    /** How long a replica remembers that the store holds no tenant of an id (0: never); a create ends it at once. */
    unknownTtlMs: Type.Integer({ minimum: 0, maximum: 60_000, default: 5000 }),
    unknownCacheSize: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 10_000 }),
    tenantAdmins: Type.Enum(['read', 'narrow'], { default: 'read' }),
  }, { default: {} }),
  logging: Section({
    level: Type.String({ default: 'info' }),
    redact: stringArray({ default: [] }),
    /** Successful GET and HEAD requests (probes, a console polling) logged at debug instead of info. */
    quietReads: Type.Boolean({ default: false }),
  }, { default: {} }),
  /**
   * Prometheus metrics cover every tenant: served on their own listener (`host`/`port`, off with
   * `enabled: false`) and, only when `token` is set, on the API port to a caller presenting it.
   */
  metrics: Section({
    enabled: Type.Boolean({ default: true }),
    host: Type.String({ default: '127.0.0.1' }),
    port: Type.Integer({ minimum: 0, maximum: 65535, default: 9464 }),
    token: Type.Optional(Type.String({ minLength: 16 })),
    /** Upper bounds in seconds of the call-duration histograms (tool calls, upstream calls), in any order. */
    durationBuckets: Type.Optional(Type.Array(Type.Number({ exclusiveMinimum: 0, maximum: 86400 }), { minItems: 1, maxItems: 40, uniqueItems: true })),
    /** Tenants with series of their own in the per-tenant metrics, per replica; the rest count as `tenant="__other__"`. */
    maxTenantSeries: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1000 }),
  }, { default: {} }),
  reload: Section({ watch: Type.Boolean({ default: false }) }, { default: {} }),
  /**
   * OpenTelemetry traces (docs/configuration.md#telemetry): off unless an endpoint is set here or in
   * OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT; the standard OTEL_* variables override these keys.
   */
  telemetry: Section({
    enabled: Type.Optional(Type.Boolean()),
    /** Base URL of an OTLP/HTTP receiver; spans go to `<endpoint>/v1/traces`. */
    endpoint: Type.Optional(httpUrl()),
    /** The full URL spans are posted to (wins over `endpoint`). */
    tracesEndpoint: Type.Optional(httpUrl()),
    protocol: Type.Enum(['http/protobuf', 'http/json'], { type: 'string', default: 'http/protobuf' }),
    serviceName: Type.String({ minLength: 1, default: 'toolgate' }),
    sampler: Type.Enum(TRACE_SAMPLERS, { type: 'string', default: 'parentbased_always_on' }),
    /** The ratio of the `traceidratio` samplers, 0 to 1. */
    samplerArg: Type.Number({ minimum: 0, maximum: 1, default: 1 }),
    /** Headers sent with every export (a collector's credentials: use `${env:NAME}`). */
    headers: stringMap({ default: {} }),
  }, { default: {} }),
  /** The operator console at /console/ (static files built into dist/console); off answers 404. */
  console: Section({ enabled: Type.Boolean({ default: false }) }, { default: {} }),
  /**
   * Admin API: `auditRecent` audit events kept per tenant in the state store for GET /v1/admin/audit
   * (0 = none; the audit sink stays the system of record); at most `maxKeysPerTenant` runtime API keys.
   */
  /**
   * toolgate's own MCP endpoint (/mcp): sessions (an `Mcp-Session-Id` from `initialize`, a GET stream for
   * notifications, DELETE to end), or stateless with `sessions: false`. Read live: a reload changes them.
   */
  mcpServer: Section({
    sessions: Type.Boolean({ default: true }),
    /** A session unused this long (no request, no open stream) is forgotten. */
    idleTimeoutMs: Type.Integer({ minimum: 1000, maximum: 86400000, default: 1800000 }),
    /** Sessions one principal (tenant + user) may hold; a new one beyond it ends that principal's least recently used. */
    maxPerPrincipal: Type.Integer({ minimum: 1, maximum: 1000, default: 16 }),
    /** Sessions one tenant may hold; an `initialize` beyond it answers 503 (another user's sessions are never ended). */
    maxPerTenant: Type.Integer({ minimum: 1, maximum: 100000, default: 1000 }),
    /**
     * Messages one POST may carry as a JSON-RPC batch; a larger batch answers 400 with JSON-RPC -32600 before
     * any of it is handled (at most the MCP SDK's own cap of 100; MCP 2025-06-18 and later have no batches).
     */
    maxBatchMessages: Type.Integer({ minimum: 1, maximum: 100, default: 100 }),
    /**
     * `notifications/cancelled` and answers to relayed requests one session may send per window, counted on
     * every replica together (they cross the bus); a POST beyond it answers 429 and none of its messages act.
     */
    signalRate: Section({
      limit: Type.Integer({ minimum: 1, maximum: 100000, default: 600 }),
      windowMs: Type.Integer({ minimum: 1000, maximum: 3600000, default: 60000 }),
    }, { default: {} }),
    /**
     * Tasks (`tools/call` with `task`, `/v1/execute` with `async`): a task is kept `ttl` ms after its last
     * change (the client's `ttl`, at most `maxTtlMs`, `defaultTtlMs` without one); one user holds at most
     * `maxPerUser` live tasks (a new one beyond it is refused); `tasks/result` waits at most `resultWaitMs`.
     * `approvalCalls: required` lists the tools the caller's approval policy holds with `taskSupport: required`
     * and refuses a call of one without `task` (docs/mcp.md#tasks).
     */
    tasks: Section({
      defaultTtlMs: Type.Integer({ minimum: 1000, maximum: 604800000, default: 3600000 }),
      maxTtlMs: Type.Integer({ minimum: 1000, maximum: 604800000, default: 86400000 }),
      maxPerUser: Type.Integer({ minimum: 1, maximum: 10000, default: 100 }),
      resultWaitMs: Type.Integer({ minimum: 100, maximum: 600000, default: 60000 }),
      approvalCalls: Type.Enum(['optional', 'required'], { default: 'optional' }),
    }, { default: {} }),
  }, { default: {} }),
  admin: Section({
    auditRecent: Type.Integer({ minimum: 0, maximum: 100000, default: 1000 }),
    maxKeysPerTenant: Type.Integer({ minimum: 0, maximum: 10000, default: 100 }),
  }, { default: {} }),
}, { $id: 'toolgate-config' });
