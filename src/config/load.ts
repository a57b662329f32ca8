import { createPrivateKey, hash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { isDeepStrictEqual } from 'node:util';
import { dirname, isAbsolute, resolve } from 'node:path';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { parse as parseYaml } from 'yaml';
import { Type, type Static } from 'typebox';
import { configSchema, tenantIdsSchema, tenantSchema } from './schema.js';
import { readPlainYaml } from './plain-yaml.js';
import { LRUCache } from 'lru-cache';
import { createValueSharing } from './shared-values.js';
import { dedent, splitTenantChunks } from './tenant-chunks.js';
import { readByTenantInWorker } from './read-in-worker.js';
import { CompactTenants, CompactTenantsBuilder, compactOf, type CompactTenantData } from './compact-tenants.js';
import { heldCredentialOf } from './discovered-issuers.js';
import { coerceInterpolated } from './coerce-interpolated.js';
import { inConfigFile } from './error-location.js';
import { ConfigError, interpolateSecrets } from './interpolate.js';
import { canonicalJson } from '../shared/canonical-json.js';
import type { GatewayConfig, TenantConfig } from './types.js';
import { didYouMean } from '../shared/did-you-mean.js';
import { isLoopbackHost } from '../shared/loopback-host.js';

export { ConfigError };

// `verbose`: an error carries the schema around it, so an unknown key can be matched against the known ones.
// `optimize: false`: ajv's optimizer makes a `{}` per generated variable name (err0…err531 for this schema),
// and V8 keeps one shape transition per distinct first key on the empty object's shape, up to 1,536 (dead
// ones are dropped by a full collection only). This schema's names with the rest of start-up filled that
// table, and then every `{}` the request path shapes anew (response headers, log bindings, nextTick records)
// got a shape of its own, so their property accesses missed their inline caches on every request.
// Config validation runs at start and on reload only.
const SCHEMA_CODE = { optimize: false } as const;
const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: false, allowUnionTypes: true, verbose: true, code: SCHEMA_CODE });
// One tenant as it sits in the file: the same schema (and so the same messages and key paths) as `tenants.<id>`.
const oneTenantSchema = Type.Object({ tenants: configSchema.properties.tenants }, { additionalProperties: false });
const validateOneTenant = ajv.compile<Static<typeof oneTenantSchema>>(oneTenantSchema);
// The config with `tenants` checked as a mapping of ids only: every tenant in it goes through `validateOneTenant`
// (validateConfigObject), so the tenant schema is compiled once, not also inside this one. Its code, compiled at
// import, was among what grew Node 24's young generation at start (bench/results.md, ten30).
const validateConfig = ajv.compile<Static<typeof configSchema>>({ ...configSchema, properties: { ...configSchema.properties, tenants: tenantIdsSchema } });

/** The roles the gateway itself gives meaning to; a tenant's `roles` adds its own. */
const GATEWAY_ROLES = ['admin', 'approver'] as const;

function knownKeys(error: ErrorObject): string[] {
  const properties = (error.parentSchema as { properties?: unknown } | undefined)?.properties;
  return properties !== null && typeof properties === 'object' ? Object.keys(properties) : [];
}

function describe(error: ErrorObject): string {
  const where = error.instancePath || '/';
  if (error.keyword === 'additionalProperties') {
    const key = String(error.params.additionalProperty);
    return `${where}: unknown key "${key}"${didYouMean(key, knownKeys(error))}`;
  }
  if (error.keyword === 'enum') return `${where}: must be one of ${JSON.stringify(error.params.allowedValues)}`;
  // The key itself pasted where its digest belongs: say how to make the digest, never echo the value.
  if (error.keyword === 'pattern' && /^\/auth\/apiKeys\/\d+\/sha256$/.test(error.instancePath)) {
    return `${where}: must be the key's SHA-256 (64 hex characters), not the key: use \`toolgate hash-key\``;
  }
  return `${where}: ${error.message ?? 'is invalid'}`;
}

/** The most specific errors first: a oneOf failure is only useful through the branch errors under it. */
function explain(errors: readonly ErrorObject[]): string {
  const specific = errors.filter((e) => e.keyword !== 'oneOf' && e.keyword !== 'if');
  const chosen = (specific.length > 0 ? specific : errors).slice(0, 5);
  return [...new Set(chosen.map(describe))].join('; ');
}

/**
 * The tenants the last load validated, by id and the canonical JSON of what the file said: a reload validates
 * (and fills the defaults of) only the tenants it changed, and hands the unchanged ones on as the same objects.
 * Holds the last load's tenants only (a file read tenant by tenant keeps its own, `tenantsByText`).
 */
let validatedTenants = new Map<string, TenantConfig>();
const isMapping = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

const invalidConfig = (source: string | undefined, errors: readonly ErrorObject[] | null | undefined): ConfigError =>
  new ConfigError(`config${source ? ` ${source}` : ''} is invalid: ${explain(errors ?? [])}`);

/**
 * Validates a raw (env-resolved) config object and returns the complete GatewayConfig. With `tenantsValidated`
 * its tenants are validated already (a file read tenant by tenant) and taken as they are.
 */
export function validateConfigObject(raw: unknown, baseDir: string, source: string | undefined, tenantsValidated = false): GatewayConfig {
  const candidate = raw ?? {};
  if (typeof candidate !== 'object' || Array.isArray(candidate)) throw new ConfigError('config: the file must hold a mapping');
  const { tenants: rawTenants, ...rest } = candidate as Record<string, unknown>;
  if (!isMapping(rawTenants)) {
    if (!validateConfig(candidate)) throw invalidConfig(source, validateConfig.errors);
    fillBranchDefaults(configSchema, candidate);
  } else {
    // Everything but the tenants, then the tenants not validated before, with the same schema and key paths.
    if (!validateConfig(rest)) throw invalidConfig(source, validateConfig.errors);
    fillBranchDefaults(configSchema, rest);
    Object.assign(rest, { tenants: tenantsValidated ? rawTenants : validateTenants(rawTenants, source) });
  }
  const validated = (isMapping(rawTenants) ? rest : candidate) as Static<typeof configSchema>;
  const config: GatewayConfig = { ...validated, baseDir, source };
  checkOpenApiEntries(config);
  resolvePaths(config);
  checkReferences(config);
  checkUpstreamAuth(config);
  checkAuditChain(config);
  return config;
}

function validateTenants(rawTenants: Record<string, unknown>, source: string | undefined): Record<string, TenantConfig> {
  // Keyed before validation fills defaults into the fresh ones.
  const keys = new Map(Object.keys(rawTenants).map((id) => [id, `${id}\u0000${canonicalJson(rawTenants[id])}`]));
  const fresh: Record<string, unknown> = {};
  for (const [id, key] of keys) if (!validatedTenants.has(key)) fresh[id] = rawTenants[id];
  const checked = { tenants: fresh };
  if (!validateOneTenant(checked)) throw invalidConfig(source, validateOneTenant.errors);
  const shared = createValueSharing();
  const tenants: Record<string, TenantConfig> = {};
  const next = new Map<string, TenantConfig>();
  for (const [id, key] of keys) {
    let tenant = validatedTenants.get(key);
    if (!tenant) {
      fillBranchDefaults(tenantSchema, (tenant = checked.tenants[id]!));
      tenant = shared(tenant);
    }
    tenants[id] = tenant;
    next.set(key, tenant);
  }
  validatedTenants = next;
  return tenants;
}

type SchemaNode = Readonly<Record<string, unknown>>;
const isNode = (value: unknown): value is SchemaNode => value !== null && typeof value === 'object' && !Array.isArray(value);

/** Without defaults: it only tells which `oneOf` branch a valid value took. */
const branchAjv = new Ajv({ strict: false, allowUnionTypes: true, code: SCHEMA_CODE });
const branchValidators = new WeakMap<SchemaNode, { matches: ValidateFunction; fill: ValidateFunction }>();

function validatorsOf(branch: SchemaNode): { matches: ValidateFunction; fill: ValidateFunction } {
  let pair = branchValidators.get(branch);
  if (!pair) branchValidators.set(branch, (pair = { matches: branchAjv.compile(branch), fill: ajv.compile(branch) }));
  return pair;
}

/**
 * ajv leaves the defaults inside `oneOf` branches alone (a branch that fails would leave its defaults
 * behind). In a valid config exactly one branch matched each `oneOf`: that branch is run again on its
 * own, so its defaults come from the schema like every other default.
 */
function fillBranchDefaults(schema: unknown, value: unknown): void {
  if (!isNode(schema) || value === null || typeof value !== 'object') return;
  // No arrays or pair lists made per node: at start every file tenant of its own text is completed once for
  // the start's check, and this walk's garbage was a third of it (bench/results.md, ten28).
  const { oneOf } = schema;
  if (Array.isArray(oneOf)) {
    for (const branch of oneOf as readonly unknown[]) {
      if (!isNode(branch) || !validatorsOf(branch).matches(value)) continue;
      validatorsOf(branch).fill(value);
      fillBranchDefaults(branch, value);
      break;
    }
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i += 1) fillBranchDefaults(schema.items, value[i]);
    return;
  }
  const properties = isNode(schema.properties) ? schema.properties : undefined;
  const object = value as Record<string, unknown>;
  for (const key in object) {
    if (!Object.hasOwn(object, key)) continue;
    const childSchema = properties && Object.hasOwn(properties, key) ? properties[key] : schema.additionalProperties;
    fillBranchDefaults(childSchema, object[key]);
  }
}

/** Exactly one document source per entry, and unique names (before paths are made absolute). */
function checkOpenApiEntries(config: GatewayConfig): void {
  const openapiNames = new Set<string>();
  for (const [index, entry] of config.openapi.entries()) {
    if ((entry.spec === undefined) === (entry.url === undefined)) {
      throw new ConfigError(`config /openapi/${index}: give exactly one of "spec" (a file) or "url"`);
    }
    if (entry.spec !== undefined && /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(entry.spec)) {
      throw new ConfigError(`config /openapi/${index}/spec: "spec" is a file path; use "url" for a document on the web`);
    }
    if (openapiNames.has(entry.name)) throw new ConfigError(`config /openapi/${index}/name: "${entry.name}" is declared twice`);
    openapiNames.add(entry.name);
  }
}

/** Upstream `auth` objects name a usable authorization server; connections need the vault and a public URL. */
function checkUpstreamAuth(config: GatewayConfig): void {
  const entries = [
    // A remote MCP service may name neither: its authorization server is found through its own metadata (RFC 9728).
    ...config.mcp.global.map((entry, index) => ({ where: `/mcp/global/${index}/auth`, auth: 'auth' in entry ? entry.auth : undefined, discoverable: true })),
    ...config.openapi.map((entry, index) => ({ where: `/openapi/${index}/auth`, auth: entry.auth, discoverable: false })),
  ];
  for (const { where, auth, discoverable } of entries) {
    if (!auth) continue;
    // Tokens, codes and the client secret travel to these: never in clear over a network.
    for (const key of ['issuer', 'authorizationUrl', 'tokenUrl', 'revocationUrl'] as const) {
      const url = auth[key] === undefined ? undefined : new URL(auth[key]);
      if (url?.protocol === 'http:' && !isLoopbackHost(url.hostname)) throw new ConfigError(`config ${where}/${key}: an authorization server must be https (plain http only on a loopback address)`);
    }
    for (const [index, issuer] of (auth.trustedIssuers ?? []).entries()) {
      const url = new URL(issuer);
      if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) throw new ConfigError(`config ${where}/trustedIssuers/${index}: an authorization server must be https (plain http only on a loopback address)`);
    }
    const discovered = discoverable && !auth.issuer && !auth.tokenUrl;
    if (!discovered && !auth.issuer && !auth.tokenUrl) throw new ConfigError(`config ${where}: give "issuer" (discovery) or "tokenUrl"`);
    if (!discovered && auth.trustedIssuers) throw new ConfigError(`config ${where}/trustedIssuers: only for a remote MCP service whose authorization server is discovered (no "issuer" or "tokenUrl"); remove it`);
    // The service's own metadata names a discovered server: a credential toolgate holds goes there only when the operator trusts it.
    const held = heldCredentialOf(auth);
    if (discovered && held !== undefined && !auth.trustedIssuers) {
      throw new ConfigError(`config ${where}: ${held} would go to whichever authorization server the service names; set "issuer" or "tokenUrl", or list the servers it may name in "trustedIssuers"`);
    }
    if (!discovered && !auth.clientId) throw new ConfigError(`config ${where}: give "clientId" (only a service whose authorization server is discovered may register one)`);
    if (!auth.clientId && config.credentials.keys.length === 0) throw new ConfigError(`config ${where}: a registered client's secret is kept encrypted: configure credentials.keys`);
    if (auth.type !== 'userOAuth') continue;
    if (!discovered && !auth.issuer && !auth.authorizationUrl) throw new ConfigError(`config ${where}: userOAuth needs "issuer" or "authorizationUrl"`);
    if (config.credentials.keys.length === 0) throw new ConfigError(`config ${where}: userOAuth keeps refresh tokens encrypted: configure credentials.keys`);
    if (!config.server.publicUrl) throw new ConfigError(`config ${where}: userOAuth needs server.publicUrl (the redirect URI is <publicUrl>/oauth/callback)`);
  }
  // Connections are keyed by service: an OpenAPI entry's name must not be an MCP service's id too.
  const mcpIds = new Set([...config.mcp.local.map((entry) => entry.service), ...config.mcp.global.map((entry) => entry.id)]);
  for (const [index, entry] of config.openapi.entries()) {
    if (entry.auth && mcpIds.has(entry.name)) throw new ConfigError(`config /openapi/${index}/name: "${entry.name}" is also an MCP service id; an entry with auth needs a name of its own`);
  }
  const ids = new Set<string>();
  for (const [index, { id, key }] of config.credentials.keys.entries()) {
    if (ids.has(id)) throw new ConfigError(`config /credentials/keys/${index}/id: "${id}" is declared twice`);
    ids.add(id);
    if (Buffer.from(key, 'base64').length !== 32) throw new ConfigError(`config /credentials/keys/${index}/key: must be 32 bytes, base64`);
  }
}

/** Checkpoints and signing keys come together; every key is an Ed25519 private key with an id of its own. */
function checkAuditChain(config: GatewayConfig): void {
  const chain = config.audit.chain;
  if (!chain) return;
  if (chain.checkpoints && !chain.signing) throw new ConfigError('config /audit/chain/signing: checkpoints are signed: give signing.keys');
  if (chain.signing && !chain.checkpoints) throw new ConfigError('config /audit/chain/checkpoints: signing keys need a place for the checkpoints they sign');
  const ids = new Set<string>();
  for (const [index, { id, privateKey }] of (chain.signing?.keys ?? []).entries()) {
    if (ids.has(id)) throw new ConfigError(`config /audit/chain/signing/keys/${index}/id: "${id}" is declared twice`);
    ids.add(id);
    let type: string | undefined;
    try {
      type = createPrivateKey(privateKey).asymmetricKeyType;
    } catch {
      throw new ConfigError(`config /audit/chain/signing/keys/${index}/privateKey: not a PEM private key`);
    }
    if (type !== 'ed25519') throw new ConfigError(`config /audit/chain/signing/keys/${index}/privateKey: must be an Ed25519 key (toolgate audit keygen), not ${type ?? 'unknown'}`);
  }
}

function resolvePaths(config: GatewayConfig): void {
  const abs = (path: string): string => (isAbsolute(path) ? path : resolve(config.baseDir, path));
  for (const entry of config.functions) if ('module' in entry) entry.module = abs(entry.module);
  for (const entry of config.mcp.local) if ('module' in entry) entry.module = abs(entry.module);
  for (const entry of config.rag) if (entry.backend.kind === 'embedded') entry.backend.documents = abs(entry.backend.documents);
  for (const entry of config.openapi) if (entry.spec !== undefined) entry.spec = abs(entry.spec);
  if (config.audit.sink === 'file') config.audit.path = abs(config.audit.path);
  const checkpoints = config.audit.chain?.checkpoints;
  if (checkpoints?.sink === 'file') checkpoints.path = abs(checkpoints.path);
  if (config.store.kind === 'redis' && config.store.tls) {
    const tls = config.store.tls;
    for (const file of ['ca', 'cert', 'key'] as const) if (tls[file] !== undefined) tls[file] = abs(tls[file]);
  }
  config.builtins.workspaceRoot = abs(config.builtins.workspaceRoot);
  config.builtins.readOnlyRoots = config.builtins.readOnlyRoots.map(abs);
}

function checkReferences(config: GatewayConfig): void {
  const jwt = config.auth.jwt;
  if (jwt && !jwt.secret && !jwt.publicKey && !jwt.jwksUrl) {
    throw new ConfigError('config /auth/jwt: one of secret, publicKey or jwksUrl is required');
  }
  const serviceIds = new Set(config.mcp.global.map((s) => s.id));
  const seen = new Set<string>();
  for (const service of [...config.mcp.local.map((s) => s.service), ...config.mcp.global.map((s) => s.id)]) {
    if (seen.has(service)) throw new ConfigError(`config /mcp: service id "${service}" is declared twice`);
    seen.add(service);
  }
  const compact = compactOf(config.tenants);
  if (!compact) for (const [name, tenant] of Object.entries(config.tenants)) checkTenantReferences(name, tenant, serviceIds);
  // A tenant kept as text that does not name `mcpServices` has the default, none: only the others are read.
  else for (let at = 0; at < compact.size; at += 1) if (compact.textAt(at).includes('"mcpServices"')) checkTenantReferences(compact.idAt(at), compact.tenantAt(at), serviceIds);
  const keyIds = new Set(config.auth.apiKeys.map((key) => key.id));
  for (const [index, operator] of config.auth.operators.entries()) {
    if ('apiKey' in operator && !keyIds.has(operator.apiKey)) {
      throw new ConfigError(`config /auth/operators/${index}/apiKey: no API key with id "${operator.apiKey}"`);
    }
  }
  for (const [index, key] of config.auth.apiKeys.entries()) {
    if (!Object.hasOwn(config.tenants, key.tenant)) {
      throw new ConfigError(`config /auth/apiKeys/${index}/tenant: tenant "${key.tenant}" is not configured${didYouMean(key.tenant, Object.keys(config.tenants))}`);
    }
    // A role nobody defines grants nothing: a typo (`admn`) would leave the key silently powerless.
    const known = [...GATEWAY_ROLES, ...Object.keys(config.tenants[key.tenant]!.roles)];
    for (const [at, role] of key.roles.entries()) {
      if (!known.includes(role)) {
        const hint = didYouMean(role, known) || `; known roles: ${known.join(', ')} (define others under tenants.${key.tenant}.roles)`;
        throw new ConfigError(`config /auth/apiKeys/${index}/roles/${at}: unknown role "${role}"${hint}`);
      }
    }
  }
}

function checkTenantReferences(name: string, tenant: TenantConfig, serviceIds: ReadonlySet<string>): void {
  for (const id of tenant.mcpServices) {
    if (!serviceIds.has(id)) throw new ConfigError(`config /tenants/${name}/mcpServices: unknown global MCP service "${id}"`);
  }
}

/**
 * Validates one tenant's configuration as `tenants.<id>` of a file (the tenant API): the same schema, defaults
 * and messages, its references checked against `config`. Returns a copy with defaults filled; `raw` is not
 * changed. Custom policy modules are refused here: a module path is code on this host, for the file only.
 */
export function validateTenantObject(id: string, raw: unknown, config: GatewayConfig): TenantConfig {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new ConfigError(`config /tenants/${id}: must be object`);
  const candidate = { tenants: { [id]: structuredClone(raw) } };
  if (!validateOneTenant(candidate)) throw new ConfigError(`config /tenants/${id} is invalid: ${explain(validateOneTenant.errors ?? [])}`);
  const tenant = candidate.tenants[id]!;
  fillBranchDefaults(tenantSchema, tenant);
  if (Object.hasOwn(tenant.policies, 'custom')) throw new ConfigError(`config /tenants/${id}/policies/custom: custom policy modules are for tenants of the configuration file`);
  checkTenantReferences(id, tenant, new Set(config.mcp.global.map((service) => service.id)));
  return tenant;
}

/**
 * The file tenants of the last load read tenant by tenant (src/config/compact-tenants.ts), each with a digest of
 * its text (dedented) in the file: a reload parses and validates only the tenants whose text changed. A tenant
 * whose text refers to a secret (`${`) has no digest: it is read again every time, as its secret may have changed.
 */
let tenantsByText: CompactTenants | undefined;
const FORBIDDEN_IDS = new Set(['__proto__', 'prototype', 'constructor']);
const YAML_OPTIONS = { uniqueKeys: true, maxAliasCount: 100 } as const;
// A digest as a string of 32 one-byte characters (48 bytes of heap, 64 in base64): one per file tenant.
const textDigest = (text: string): string => hash('sha256', text, 'binary');

/** Where a file's values come from: its secrets (env and files beside it) and its name in errors. */
export interface FileAt {
  readonly env: NodeJS.ProcessEnv;
  readonly baseDir: string;
  readonly source: string;
}

/** A file read tenant by tenant: the rest of it (parsed, `tenants` null) and its validated tenants as a table of texts. */
export interface ReadByTenant {
  readonly head: Record<string, unknown>;
  readonly tenants: CompactTenantData;
}

/**
 * The file read tenant by tenant (src/config/tenant-chunks.ts): each tenant whose text is new is parsed, its
 * secrets resolved and validated on its own (same schema and key paths as in the whole file), the others are
 * the last load's objects. Undefined when the file is not cut that way or a piece does not parse on its own:
 * the whole-file parse then reads it, and names any YAML error with its line.
 */
export function readByTenant(text: string, at: FileAt, parse: YamlParse = parseConfigYaml): ReadByTenant | undefined {
  const cut = splitTenantChunks(text);
  if (!cut || cut.chunks.length === 0) return undefined;
  let head: unknown;
  try {
    head = parse(cut.head, YAML_OPTIONS);
  } catch {
    return undefined;
  }
  if (!isMapping(head) || head.tenants !== null) return undefined;
  const previous = tenantsByText;
  // The last load's tenants by digest, for this read only.
  const known = new Map<string, number>();
  if (previous) {
    for (let position = 0; position < previous.size; position += 1) {
      const digest = previous.digestAt(position);
      if (digest !== undefined) known.set(digest, position);
    }
  }
  // The tenants' JSON is about as long as their YAML: the file's size is the table's first guess.
  const tenants = new CompactTenantsBuilder(text.length - cut.head.length, cut.chunks.length);
  for (const chunk of cut.chunks) {
    const digest = chunk.includes('${') ? undefined : textDigest(chunk);
    // The same text is the same id and tenant: the last load's text is kept as it is.
    const position = digest === undefined ? undefined : known.get(digest);
    let added: boolean;
    if (previous && position !== undefined) added = tenants.add(previous.idAt(position), previous.textBytesAt(position), digest);
    else {
      let parsed: unknown;
      try {
        parsed = parse(dedent(chunk, cut.indent), YAML_OPTIONS);
      } catch {
        return undefined;
      }
      const [id, value] = entryOf(parsed);
      if (id === undefined || FORBIDDEN_IDS.has(id)) return undefined;
      const text = validateFileTenant(id, value, at);
      if (text === undefined) return undefined;
      added = tenants.add(id, text, digest);
    }
    if (!added) return undefined;
  }
  return { head, tenants: tenants.build() };
}

/** The rest of the file secret-resolved and validated around tenants read by `readByTenant`; they become the last load's. */
function configByTenant(read: ReadByTenant, at: FileAt): GatewayConfig {
  const interpolated = new Set<string>();
  const raw = interpolateSecrets({ ...read.head, tenants: {} }, { env: at.env, baseDir: at.baseDir, interpolated }) as Record<string, unknown>;
  coerceInterpolated(raw, interpolated, validateConfig);
  const tenants = openCompactTenants(read.tenants);
  const config = validateConfigObject({ ...raw, tenants: tenants.record }, at.baseDir, at.source, true);
  tenantsByText = tenants;
  return config;
}

/**
 * One tenant of the file, secret-resolved and validated as `tenants.<id>`: the JSON of what it says (defaults
 * not filled, so the text stays short), which `completeTenant` turns into the tenant when it is read;
 * undefined when JSON cannot say it.
 */
function validateFileTenant(id: string, value: unknown, at: FileAt): string | undefined {
  const interpolated = new Set<string>();
  const candidate = interpolateSecrets({ tenants: { [id]: value } }, { env: at.env, baseDir: at.baseDir, interpolated });
  coerceInterpolated(candidate, interpolated, validateOneTenant);
  // Before validation, which fills the defaults in place.
  const raw = (candidate as { tenants: Record<string, unknown> }).tenants[id];
  const text = JSON.stringify(raw);
  if (!validateOneTenant(candidate)) throw invalidConfig(at.source, validateOneTenant.errors);
  // A value JSON has no text for (YAML's `.inf`) would come back as null: such a file is read whole.
  return text.includes('null') && !isDeepStrictEqual(JSON.parse(text), raw) ? undefined : text;
}

/** A table of file tenants read by `readByTenant` (here or in a worker), its tenants completed as the config's are. */
export function openCompactTenants(data: CompactTenantData): CompactTenants {
  return new CompactTenants(data, completeTenant);
}

/** A file tenant's JSON (validated when the file was read) as the tenant: defaults filled, frozen. */
function completeTenant(id: string, raw: unknown): TenantConfig {
  const candidate = { tenants: { [id]: raw } };
  if (!validateOneTenant(candidate)) throw new ConfigError(`config /tenants/${id} is invalid: ${explain(validateOneTenant.errors ?? [])}`);
  const tenant = candidate.tenants[id]!;
  fillBranchDefaults(tenantSchema, tenant);
  return completedValues(tenant);
}

// A file tenant is completed when it is first compiled, and kept by its view while warm: tenants whose texts differ
// in one option (a limit of their own) share every other part, as a whole-file load's tenants do (ten30: ~1.5 KiB
// of the ~5 KiB a compiled tenant held). Bounded: parts no warm tenant has in common are dropped in time.
const completedValues = createValueSharing(new LRUCache<string, NonNullable<unknown>>({ max: 8192 }));

/** The one key and value of a chunk's mapping; no id when it is anything else. */
function entryOf(parsed: unknown): [string | undefined, unknown] {
  if (!isMapping(parsed)) return [undefined, undefined];
  const keys = Object.keys(parsed);
  return keys.length === 1 ? [keys[0], parsed[keys[0]!]] : [undefined, undefined];
}

/** The YAML parser the loader uses: the `yaml` package's, or (in tests) one that watches what it is given. */
export type YamlParse = (text: string, options: typeof YAML_OPTIONS) => unknown;

/** The plain part of YAML read at once (src/config/plain-yaml.ts), the rest by the `yaml` package. */
function parseConfigYaml(text: string, options: typeof YAML_OPTIONS): unknown {
  const plain = readPlainYaml(text);
  return plain ? plain.value : parseYaml(text, options);
}

/**
 * From this size on (about 3,500 tenants), a file with no tenants read before (the start) is read tenant by
 * tenant in a worker (src/config/read-in-worker.ts): the read's garbage grows the heap of the thread it runs
 * in, and V8 keeps those pages after the gateway is ready; the worker's heap is bounded and goes with it.
 * Smaller files are read here: a worker is a second isolate to start.
 */
const IN_WORKER_BYTES = 1024 * 1024;

/** Reads, secret-resolves (env and files) and validates a YAML config file. Throws ConfigError naming the bad key. */
export async function loadConfigFile(path: string, env: NodeJS.ProcessEnv = process.env, parse: YamlParse = parseConfigYaml): Promise<GatewayConfig> {
  const absolute = resolve(path);
  const read = async (): Promise<Buffer> => {
    try {
      return await readFile(absolute);
    } catch (error) {
      throw new ConfigError(`config ${absolute}: cannot read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  };
  const at: FileAt = { env, baseDir: dirname(absolute), source: absolute };
  let bytes = await read();
  try {
    if (parse === parseConfigYaml && tenantsByText === undefined && bytes.length >= IN_WORKER_BYTES) {
      const answer = await readByTenantInWorker(bytes, at);
      if (answer) return configByTenant(answer, at);
      // Not read tenant by tenant (or the worker did not answer): read here, from the file again (its bytes went to the worker).
      bytes = await read();
    }
  } catch (error) {
    throw inConfigFile(error, absolute);
  }
  // Decoded at once: read as text, a large file is pieced together and then copied whole by the first regular expression.
  const text = bytes.toString('utf8');
  try {
    const byTenant = readByTenant(text, at, parse);
    if (byTenant) return configByTenant(byTenant, at);
  } catch (error) {
    throw inConfigFile(error, absolute);
  }
  let parsed: unknown;
  try {
    parsed = parse(text, YAML_OPTIONS);
  } catch (error) {
    throw new ConfigError(`config ${absolute}: invalid YAML: ${(error as Error).message.split('\n')[0]}`);
  }
  try {
    const interpolated = new Set<string>();
    const raw = interpolateSecrets(parsed, { env, baseDir: dirname(absolute), interpolated });
    coerceInterpolated(raw, interpolated, validateConfig);
    return validateConfigObject(raw, dirname(absolute), absolute);
  } catch (error) {
    throw inConfigFile(error, absolute);
  }
}
