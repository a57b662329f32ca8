// The `toolgate` command (package.json "bin"): `toolgate hash-key` prints the `auth.apiKeys[].sha256` of a
// key, `toolgate check FILE` validates a config without serving it, and the command-line options of
// `npm start` (`--config <file>`, `--help`, `--version`) are read here too.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { TenantLoader } from './policy-cli/cli.js';
import { apiKeyDigest, newApiKey } from './shared/api-key-digest.js';
import { packageRoot } from './config/demo.js';
import { firstLine } from './config/error-location.js';
import { ConfigError, loadConfigFile } from './config/load.js';
import { tenantIds } from './config/compact-tenants.js';
import type { GatewayConfig } from './config/types.js';

const USAGE = `usage:
  toolgate hash-key           read a key on stdin, print its sha256 for auth.apiKeys[].sha256
  toolgate hash-key --new     make a new random key, print it and its sha256
  toolgate audit verify …     check audit logs against their signed checkpoints (toolgate audit help)
  toolgate audit keygen       print a new Ed25519 key pair for audit.chain.signing
  toolgate check FILE         validate a config file (schema, references, policies, modules) without serving it
  toolgate policy test …      run a tenant's Cedar policies against a case file (toolgate policy help)
  toolgate policy schema T    print tenant T's generated Cedar schema
  toolgate --version          print the version
  npm start -- --config FILE  start the gateway on a config file (same as TOOLGATE_CONFIG=FILE)
  npm start                   start the demo (HOST, PORT, METRICS_HOST, METRICS_PORT move its listeners)`;

/** Exit code for a wrong command line (EX_USAGE). */
export const EXIT_USAGE = 64;
/** Exit code for a configuration that does not validate (EX_CONFIG). */
export const EXIT_CONFIG = 78;

export class UsageError extends Error {}

/** `toolgate check` found the config wrong: its one-line message, exit 78. */
export class CheckFailed extends Error {}

export function version(): string {
  return (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}

const isHelp = (arg: string | undefined): boolean => arg === '--help' || arg === '-h' || arg === 'help';
const isVersion = (arg: string | undefined): boolean => arg === '--version' || arg === '-v';

/** What `npm start -- --help` or `-- --version` prints instead of starting; undefined to start. */
export function startAnswer(argv: readonly string[]): string | undefined {
  if (argv.some(isHelp)) return `${USAGE}\n`;
  if (argv.some(isVersion)) return `toolgate ${version()}\n`;
  return undefined;
}

/** The config file `npm start` serves: `--config FILE` (or `--config=FILE`) wins over TOOLGATE_CONFIG; none means the demo. */
export function configPathFrom(argv: string[], env: NodeJS.ProcessEnv): string | undefined {
  let values;
  try {
    ({ values } = parseArgs({ args: argv, options: { config: { type: 'string', short: 'c' } }, strict: true, allowPositionals: false }));
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n${USAGE}`);
  }
  return values.config ?? (env.TOOLGATE_CONFIG || undefined);
}

/** Builds the gateway on the file as `npm start` would (modules, policy chains, providers), then closes it unserved. */
export type BuildCheck = (config: GatewayConfig) => Promise<void>;

async function check(args: string[], build: BuildCheck | undefined): Promise<string> {
  if (args.length !== 1 || args[0]!.startsWith('-')) throw new UsageError(`check takes one config file\n${USAGE}`);
  try {
    const config = await loadConfigFile(args[0]!);
    await build?.(config);
    const tenants = tenantIds(config.tenants).length;
    return `config ${config.source} is valid: ${tenants} tenant${tenants === 1 ? '' : 's'}\n`;
  } catch (error) {
    if (error instanceof ConfigError || (error instanceof Error && (error as { code?: unknown }).code === 'TG_CONFIG_INVALID')) {
      throw new CheckFailed(firstLine(error.message));
    }
    throw error;
  }
}

/** Runs `toolgate <args>`: what to print on stdout, or a UsageError / CheckFailed. `stdin` is read only when needed. */
export async function runCli(args: string[], stdin: () => Promise<string>, build?: BuildCheck): Promise<string> {
  const [command, ...rest] = args;
  if (command === undefined || isHelp(command)) return `${USAGE}\n`;
  if (isVersion(command)) return `toolgate ${version()}\n`;
  // `toolgate <command> --help` explains, never takes `--help` as an argument (a key, a file).
  if (rest.some(isHelp)) {
    if (command === 'hash-key' || command === 'check') return `${USAGE}\n`;
  }
  if (command === 'check') return check(rest, build);
  if (command === 'hash-key') {
    if (rest.length === 1 && rest[0] === '--new') {
      const key = newApiKey();
      return `key:    ${key}\nsha256: ${apiKeyDigest(key)}\n`;
    }
    if (rest.some((arg) => arg.startsWith('-'))) throw new UsageError(`hash-key takes --new, --help or nothing (the key comes on stdin)\n${USAGE}`);
    if (rest.length > 0) throw new UsageError(`hash-key takes no key argument (a key on the command line stays in the shell's history): pipe it in\n${USAGE}`);
    // One key, without the newline `echo` or a file adds: the gateway compares the exact bearer token.
    const key = (await stdin()).replace(/\r?\n$/, '');
    if (key.length === 0) throw new UsageError(`no key on stdin\n${USAGE}`);
    if (/[\r\n]/.test(key)) throw new UsageError('one key per call: stdin has more than one line');
    return `${apiKeyDigest(key)}\n`;
  }
  throw new UsageError(`unknown command ${JSON.stringify(command)}\n${USAGE}`);
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write('key (then Enter, Ctrl-D): ');
  let text = '';
  for await (const chunk of process.stdin) text += String(chunk);
  return text;
}

/** `toolgate check` builds the app the way the server does, without listening, on an in-memory store. */
export const buildForCheck: BuildCheck = async (config) => {
  const [{ buildServer }, { createMemoryStore }] = await Promise.all([import('./app.js'), import('./store/memory.js')]);
  const app = await buildServer(config, { logger: false, defaultMetrics: false, store: createMemoryStore() });
  await app.close();
};

/** The bin entry point. */
export async function main(argv: string[] = process.argv.slice(2)): Promise<void> {
  if (argv[0] === 'audit') return audit(argv.slice(1));
  if (argv[0] === 'policy') return policy(argv.slice(1));
  try {
    process.stdout.write(await runCli(argv, readStdin, buildForCheck));
  } catch (error) {
    if (error instanceof CheckFailed) {
      process.stderr.write(`toolgate: ${error.message}\n`);
      process.exitCode = EXIT_CONFIG;
      return;
    }
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`toolgate: ${error.message}\n`);
    process.exitCode = EXIT_USAGE;
  }
}

/** `toolgate audit …`: exit codes of its own for CI jobs (0 OK, 1 a chain is broken, 2 usage). */
async function audit(args: string[]): Promise<void> {
  // Loaded when the command runs: the server imports this module too, and never runs it (ten30, bench/results.md).
  const { AUDIT_EXIT, AuditUsageError, runAuditCli } = await import('./audit/cli.js');
  try {
    const { stdout, exitCode } = await runAuditCli(args);
    process.stdout.write(stdout);
    process.exitCode = exitCode;
  } catch (error) {
    if (!(error instanceof AuditUsageError)) throw error;
    process.stderr.write(`toolgate audit: ${error.message}\n`);
    process.exitCode = AUDIT_EXIT.usage;
  }
}

/** The TenantLoader of the real command: the config built as `toolgate check` builds it, on an in-memory store. */
const tenantFromConfig =
  ({ POLICY_USAGE, PolicyConfigError, PolicyUsageError }: typeof import('./policy-cli/cli.js')): TenantLoader =>
  async (configPath, tenant) => {
    const [{ buildServer }, { createMemoryStore }, { loadConfigFile, ConfigError }] = await Promise.all([import('./app.js'), import('./store/memory.js'), import('./config/load.js')]);
    let config: GatewayConfig;
    try {
      if (configPath === undefined) throw new PolicyUsageError(`give --config FILE (or TOOLGATE_CONFIG) to test a tenant\n${POLICY_USAGE}`);
      config = await loadConfigFile(configPath);
    } catch (error) {
      if (error instanceof ConfigError) throw new PolicyConfigError(error.message.split('\n', 1)[0]);
      throw error;
    }
    const app = await buildServer(config, { logger: false, defaultMetrics: false, store: createMemoryStore() }).catch((error: unknown) => {
      throw new PolicyConfigError((error as Error).message.split('\n', 1)[0]);
    });
    try {
      const view = await app.gateway.loadTenant(tenant).catch((error: unknown) => {
        throw new PolicyConfigError((error as Error).message.split('\n', 1)[0]);
      });
      if (!view) throw new PolicyConfigError(`tenant ${tenant} is not configured`);
      if (!view.cedar) throw new PolicyConfigError(`tenant ${tenant} has no cedar policies`);
      return { engine: view.cedar, tools: app.gateway.current().catalog.tools };
    } finally {
      await app.close();
    }
  };

/** `toolgate policy …`: 0 every case passed, 1 a case failed, 64 usage, 78 a config or policy error. */
async function policy(args: string[]): Promise<void> {
  // Loaded when the command runs, as `audit`'s: its case-file validator is compiled at import.
  const cli = await import('./policy-cli/cli.js');
  const { POLICY_USAGE, PolicyConfigError, PolicyUsageError, runPolicyCli } = cli;
  if (args.length === 0 || isHelp(args[0])) {
    process.stdout.write(`${POLICY_USAGE}\n`);
    return;
  }
  try {
    const { stdout, exitCode } = await runPolicyCli(args, process.env, tenantFromConfig(cli));
    process.stdout.write(stdout);
    process.exitCode = exitCode;
  } catch (error) {
    if (error instanceof PolicyUsageError) {
      process.stderr.write(`toolgate policy: ${error.message}\n`);
      process.exitCode = EXIT_USAGE;
      return;
    }
    if (!(error instanceof PolicyConfigError)) throw error;
    process.stderr.write(`toolgate policy: ${error.message}\n`);
    process.exitCode = EXIT_CONFIG;
  }
}
