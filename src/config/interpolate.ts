import { DomainError } from '../errors.js';
import { closeSync, constants as fsc, fstatSync, openSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';

// `${env:NAME}` and `${file:/run/secrets/name}` are resolved once at load time (secrets from the
// environment or from files, e.g. Docker/Kubernetes secrets). Per-call templates (`${principal.*}`,
// `${claims.*}`) are left untouched here: they are resolved by bind-arguments. One pass over each string,
// so a value read from the environment or a file is never itself expanded.
const SECRET_REF = /\$\{(env|file):([^}]*)\}/g;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const FORBIDDEN_KEYS = new Set(['__proto__', 'prototype', 'constructor']);
const MAX_SECRET_FILE_BYTES = 64 * 1024;

export class ConfigError extends DomainError {
  readonly gatewayCode = 'TG_CONFIG_INVALID';
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

export interface SecretSources {
  env: NodeJS.ProcessEnv;
  /** Folder that relative `${file:…}` paths resolve against (the config file's). */
  baseDir: string;
  /** Told the path (`/metrics/port`) of each string that held a reference: its value may need coercing. */
  interpolated?: Set<string>;
}

/**
 * A secret file's text without its trailing line break(s). Opened non-blocking and checked to be a small
 * regular file first, so a FIFO or device named by mistake fails the load instead of hanging it.
 */
function readSecretFile(file: string, where: string): string {
  let fd: number;
  try {
    fd = openSync(file, fsc.O_RDONLY | fsc.O_NONBLOCK | fsc.O_NOCTTY);
  } catch (error) {
    throw new ConfigError(`config ${where}: cannot read secret file ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new ConfigError(`config ${where}: secret file ${file} is not a regular file`);
    if (stat.size > MAX_SECRET_FILE_BYTES) throw new ConfigError(`config ${where}: secret file ${file} is larger than ${MAX_SECRET_FILE_BYTES} bytes`);
    return readFileSync(fd, 'utf8').replace(/(?:\r?\n)+$/, '');
  } finally {
    closeSync(fd);
  }
}

/**
 * Deep-copies a parsed YAML value, resolving secret references in strings. Refuses keys that could
 * reach an object prototype, so a config file can never pollute one.
 */
export function interpolateSecrets(value: unknown, sources: SecretSources, path = ''): unknown {
  if (typeof value === 'string') {
    const where = path || '/';
    let referenced = false;
    const resolved = value.replace(SECRET_REF, (match, kind: string, ref: string) => {
      referenced = true;
      if (kind === 'file') {
        if (!ref) throw new ConfigError(`config ${where}: \${file:} needs a path`);
        return readSecretFile(resolve(sources.baseDir, ref), where);
      }
      if (!ENV_NAME.test(ref)) return match;
      const found = sources.env[ref];
      if (found === undefined) throw new ConfigError(`config ${where}: environment variable ${ref} is not set`);
      return found;
    });
    if (referenced) sources.interpolated?.add(where);
    return resolved;
  }
  if (Array.isArray(value)) return value.map((item, index) => interpolateSecrets(item, sources, `${path}/${index}`));
  if (value !== null && typeof value === 'object') {
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      if (FORBIDDEN_KEYS.has(key)) throw new ConfigError(`config ${path}/${key}: key is not allowed`);
      copy[key] = interpolateSecrets(item, sources, `${path}/${key}`);
    }
    return copy;
  }
  return value;
}
