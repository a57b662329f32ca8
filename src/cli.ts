// The `toolgate` command (package.json "bin"): `toolgate hash-key` prints the `auth.apiKeys[].sha256` of a
// key, and the command-line options of `npm start` (`--config <file>`) are read here too.
import { parseArgs } from 'node:util';
import { AUDIT_EXIT, AuditUsageError, runAuditCli } from './audit/cli.js';
import { apiKeyDigest, newApiKey } from './shared/api-key-digest.js';

const USAGE = `usage:
  toolgate hash-key           read a key on stdin, print its sha256 for auth.apiKeys[].sha256
  toolgate hash-key --new     make a new random key, print it and its sha256
  toolgate audit verify …     check audit logs against their signed checkpoints (toolgate audit help)
  toolgate audit keygen       print a new Ed25519 key pair for audit.chain.signing
  npm start -- --config FILE  start the gateway on a config file (same as TOOLGATE_CONFIG=FILE)`;

/** Exit code for a wrong command line (EX_USAGE). */
export const EXIT_USAGE = 64;

export class UsageError extends Error {}

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

/** Runs `toolgate <args>`: what to print on stdout, or a UsageError. `stdin` is read only when needed. */
export async function runCli(args: string[], stdin: () => Promise<string>): Promise<string> {
  const [command, ...rest] = args;
  if (command === 'hash-key') {
    if (rest.length === 1 && rest[0] === '--new') {
      const key = newApiKey();
      return `key:    ${key}\nsha256: ${apiKeyDigest(key)}\n`;
    }
    if (rest.length > 0) throw new UsageError(`hash-key takes no key argument (a key on the command line stays in the shell's history): pipe it in\n${USAGE}`);
    // One key, without the newline `echo` or a file adds: the gateway compares the exact bearer token.
    const key = (await stdin()).replace(/\r?\n$/, '');
    if (key.length === 0) throw new UsageError(`no key on stdin\n${USAGE}`);
    if (/[\r\n]/.test(key)) throw new UsageError('one key per call: stdin has more than one line');
    return `${apiKeyDigest(key)}\n`;
  }
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') return `${USAGE}\n`;
  throw new UsageError(`unknown command ${JSON.stringify(command)}\n${USAGE}`);
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write('key (then Enter, Ctrl-D): ');
  let text = '';
  for await (const chunk of process.stdin) text += String(chunk);
  return text;
}

/** The bin entry point. */
export async function main(argv: string[] = process.argv.slice(2)): Promise<void> {
  if (argv[0] === 'audit') return audit(argv.slice(1));
  try {
    process.stdout.write(await runCli(argv, readStdin));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`toolgate: ${error.message}\n`);
    process.exitCode = EXIT_USAGE;
  }
}

/** `toolgate audit …`: exit codes of its own for CI jobs (0 OK, 1 a chain is broken, 2 usage). */
async function audit(args: string[]): Promise<void> {
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
