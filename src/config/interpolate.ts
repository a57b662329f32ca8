// `${env:NAME}` is resolved once at load time (secrets from the environment). Per-call templates
// (`${principal.*}`, `${claims.*}`) are left untouched here: they are resolved by bind-arguments.
const ENV_REF = /\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g;
const FORBIDDEN_KEYS = new Set(['__proto__', 'prototype', 'constructor']);

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/**
 * Deep-copies a parsed YAML value, resolving env references in strings. Refuses keys that could
 * reach an object prototype, so a config file can never pollute one.
 */
export function interpolateEnv(value: unknown, env: NodeJS.ProcessEnv, path = ''): unknown {
  if (typeof value === 'string') {
    return value.replace(ENV_REF, (_match, name: string) => {
      const resolved = env[name];
      if (resolved === undefined) throw new ConfigError(`config ${path || '/'}: environment variable ${name} is not set`);
      return resolved;
    });
  }
  if (Array.isArray(value)) return value.map((item, index) => interpolateEnv(item, env, `${path}/${index}`));
  if (value !== null && typeof value === 'object') {
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      if (FORBIDDEN_KEYS.has(key)) throw new ConfigError(`config ${path}/${key}: key is not allowed`);
      copy[key] = interpolateEnv(item, env, `${path}/${key}`);
    }
    return copy;
  }
  return value;
}
