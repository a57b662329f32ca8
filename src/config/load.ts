import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { Ajv, type ErrorObject } from 'ajv';
import { parse as parseYaml } from 'yaml';
import { configSchema } from './schema.js';
import { ConfigError, interpolateSecrets } from './interpolate.js';
import type { GatewayConfig } from './types.js';

export { ConfigError };

const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: false, allowUnionTypes: true });
const validateConfig = ajv.compile(configSchema);

function describe(error: ErrorObject): string {
  const where = error.instancePath || '/';
  if (error.keyword === 'additionalProperties') {
    return `${where}: unknown key "${String(error.params.additionalProperty)}"`;
  }
  if (error.keyword === 'enum') return `${where}: must be one of ${JSON.stringify(error.params.allowedValues)}`;
  return `${where}: ${error.message ?? 'is invalid'}`;
}

/** The most specific errors first: a oneOf failure is only useful through the branch errors under it. */
function explain(errors: readonly ErrorObject[]): string {
  const specific = errors.filter((e) => e.keyword !== 'oneOf' && e.keyword !== 'if');
  const chosen = (specific.length > 0 ? specific : errors).slice(0, 5);
  return [...new Set(chosen.map(describe))].join('; ');
}

/** Validates a raw (env-resolved) config object and returns the complete GatewayConfig. */
export function validateConfigObject(raw: unknown, baseDir: string, source: string | undefined): GatewayConfig {
  const candidate = (raw ?? {}) as Record<string, unknown>;
  if (typeof candidate !== 'object' || Array.isArray(candidate)) throw new ConfigError('config: the file must hold a mapping');
  if (!validateConfig(candidate)) {
    throw new ConfigError(`config${source ? ` ${source}` : ''} is invalid: ${explain(validateConfig.errors ?? [])}`);
  }
  const config = { ...(candidate as unknown as GatewayConfig), baseDir, source };
  applyBranchDefaults(config);
  checkOpenApiEntries(config);
  resolvePaths(config);
  checkReferences(config);
  return config;
}

/** ajv does not apply defaults inside oneOf branches; fill those here. */
function applyBranchDefaults(config: GatewayConfig): void {
  for (const entry of config.functions) {
    if ('http' in entry) {
      entry.description ??= '';
      entry.inputSchema ??= { type: 'object', properties: {} };
      entry.http.method ??= 'POST';
      entry.http.headers ??= {};
      entry.http.timeoutMs ??= 10000;
    }
  }
  for (const entry of [...config.mcp.local, ...config.mcp.global] as Array<Record<string, unknown>>) {
    if (entry.transport === 'stdio') {
      entry.args ??= [];
      entry.env ??= {};
    } else if (typeof entry.url === 'string') {
      entry.headers ??= {};
    }
  }
  for (const entry of config.mcp.global) {
    entry.required ??= false;
    entry.defer ??= false;
    entry.pin ??= true;
    entry.forwardIdentity ??= {};
  }
  for (const entry of config.rag) {
    if (entry.backend.kind === 'http') {
      entry.backend.headers ??= {};
      entry.backend.timeoutMs ??= 10000;
    }
  }
  if (config.store.kind === 'redis') {
    config.store.prefix ??= 'toolgate:';
    config.store.onUnavailable ??= 'fail-closed';
    config.store.commandTimeoutMs ??= 1000;
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

function resolvePaths(config: GatewayConfig): void {
  const abs = (path: string): string => (isAbsolute(path) ? path : resolve(config.baseDir, path));
  for (const entry of config.functions) if ('module' in entry) entry.module = abs(entry.module);
  for (const entry of config.mcp.local) if ('module' in entry) entry.module = abs(entry.module);
  for (const entry of config.rag) if (entry.backend.kind === 'embedded') entry.backend.documents = abs(entry.backend.documents);
  for (const entry of config.openapi) if (entry.spec !== undefined) entry.spec = abs(entry.spec);
  if (config.audit.sink === 'file') config.audit.path = abs(config.audit.path);
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
  for (const [name, tenant] of Object.entries(config.tenants)) {
    for (const id of tenant.mcpServices) {
      if (!serviceIds.has(id)) throw new ConfigError(`config /tenants/${name}/mcpServices: unknown global MCP service "${id}"`);
    }
  }
  const keyIds = new Set(config.auth.apiKeys.map((key) => key.id));
  for (const [index, operator] of config.auth.operators.entries()) {
    if ('apiKey' in operator && !keyIds.has(operator.apiKey)) {
      throw new ConfigError(`config /auth/operators/${index}/apiKey: no API key with id "${operator.apiKey}"`);
    }
  }
  for (const [index, key] of config.auth.apiKeys.entries()) {
    if (!Object.hasOwn(config.tenants, key.tenant)) {
      throw new ConfigError(`config /auth/apiKeys/${index}/tenant: tenant "${key.tenant}" is not configured`);
    }
  }
}

/** Reads, secret-resolves (env and files) and validates a YAML config file. Throws ConfigError naming the bad key. */
export async function loadConfigFile(path: string, env: NodeJS.ProcessEnv = process.env): Promise<GatewayConfig> {
  const absolute = resolve(path);
  let text: string;
  try {
    text = await readFile(absolute, 'utf8');
  } catch (error) {
    throw new ConfigError(`config ${absolute}: cannot read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  let parsed: unknown;
  try {
    parsed = parseYaml(text, { uniqueKeys: true, maxAliasCount: 100 });
  } catch (error) {
    throw new ConfigError(`config ${absolute}: invalid YAML: ${(error as Error).message.split('\n')[0]}`);
  }
  return validateConfigObject(interpolateSecrets(parsed, { env, baseDir: dirname(absolute) }), dirname(absolute), absolute);
}
