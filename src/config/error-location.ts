import { ConfigError } from './interpolate.js';

// Every configuration error reads the same, whichever step found it: `config <file> <path>: what is wrong`
// and, where it is known, what would be right. The step that knows the path writes it; these add what the
// step did not know (the file, the tenant) on the way out.

export const isConfigInvalid = (error: unknown): error is Error =>
  error instanceof Error && (error instanceof ConfigError || (error as { code?: unknown }).code === 'TG_CONFIG_INVALID');

/** The first line of a message: a module's syntax error or a stack must not spill over several lines. */
export const firstLine = (text: string): string => text.split('\n', 1)[0]!.trim();

/** A configuration error found under `pointer` (e.g. `/tenants/acme`) by a step that names only what is inside it. */
export function inConfigPath(error: unknown, pointer: string): unknown {
  if (!isConfigInvalid(error)) return error;
  const message = firstLine(error.message).replace(/^config\b\s*/, '');
  if (message.startsWith('/')) return new ConfigError(`config ${message}`);
  return new ConfigError(`config ${pointer}: ${message}`);
}

/** The same error, naming the config file it is about (once). Errors of other kinds pass through. */
export function inConfigFile(error: unknown, file: string | undefined): unknown {
  if (!isConfigInvalid(error) || file === undefined) return error;
  const message = firstLine(error.message);
  if (message.startsWith(`config ${file}`)) return error instanceof ConfigError ? error : new ConfigError(message);
  const rest = message.replace(/^config\b/, '');
  if (rest.startsWith(' /') || rest.startsWith(':')) return new ConfigError(`config ${file}${rest}`);
  return new ConfigError(`config ${file}: ${message}`);
}
