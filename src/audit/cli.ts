// `toolgate audit verify` and `toolgate audit keygen` (docs/operations.md#tamper-evident-audit).
import { createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { createRedisStore } from '../store/redis.js';
import { readStoredCheckpoints, tenantOfChain } from './store-checkpoints.js';
import { chainsInLogs, verifyAudit, type ChainBreak, type TextSource, type VerifyReport } from './verify.js';

export const AUDIT_USAGE = `usage:
  toolgate audit verify --log FILE [FILE…] --checkpoints FILE|URL|REDIS_URL --public-keys FILE [--json]
      check the audit chains of the log files (oldest rotated file first; stdout captures welcome,
      other lines are skipped) against their signed checkpoints; exit 0 OK, 1 broken, 2 usage.
      With redis://… (checkpoints: {sink: store}) it reads the gateway-wide list and the lists of the
      tenants whose chains the logs hold, plus every --tenant T (a tenant whose events all left the logs)
  toolgate audit checkpoints --store REDIS_URL [--tenant T…] [--store-prefix P]
      print the checkpoints kept in the state store (the gateway-wide list and each --tenant's) as
      JSON lines, for a checkpoint file of their own
  toolgate audit keygen [--id ID]
      print a new Ed25519 signing key (for audit.chain.signing.keys) and its public key`;

/** Exit codes for CI: 0 every chain holds, 1 a break was found, 2 the command line or an input was wrong. */
export const AUDIT_EXIT = { ok: 0, broken: 1, usage: 2 } as const;

export class AuditUsageError extends Error {}

export interface AuditCliResult {
  stdout: string;
  exitCode: number;
}

const KEY_ID_LINE = /^#\s*key-id:\s*([A-Za-z0-9._-]+)\s*$/;
const PEM_BLOCK = /-----BEGIN PUBLIC KEY-----[\s\S]*?-----END PUBLIC KEY-----/g;

/**
 * Public keys by id from a file of PEM blocks, each preceded by a `# key-id: <id>` line (as keygen prints
 * them; PEM allows text outside the blocks).
 */
export function parsePublicKeys(text: string, name = 'public keys'): Map<string, KeyObject> {
  const keys = new Map<string, KeyObject>();
  for (const match of text.matchAll(PEM_BLOCK)) {
    const before = text.slice(0, match.index).trimEnd().split('\n');
    const id = KEY_ID_LINE.exec(before[before.length - 1] ?? '')?.[1];
    if (!id) throw new AuditUsageError(`${name}: every PEM block needs a "# key-id: <id>" line just before it`);
    let key: KeyObject;
    try {
      key = createPublicKey(match[0]);
    } catch {
      throw new AuditUsageError(`${name}: key "${id}" is not a readable public key`);
    }
    if (key.asymmetricKeyType !== 'ed25519') throw new AuditUsageError(`${name}: key "${id}" is not an Ed25519 key`);
    keys.set(id, key);
  }
  if (keys.size === 0) throw new AuditUsageError(`${name}: no public key found`);
  return keys;
}

export function keygen(id = 'k1'): string {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return [
    `# audit.chain.signing.keys: [{ id: ${id}, privateKey: "\${file:/run/secrets/audit-${id}.pem}" }] — keep this one secret`,
    privateKey.export({ type: 'pkcs8', format: 'pem' }).toString().trimEnd(),
    '# for the verifier\'s --public-keys file (publish it):',
    `# key-id: ${id}`,
    publicKey.export({ type: 'spki', format: 'pem' }).toString().trimEnd(),
    '',
  ].join('\n');
}

async function readSource(where: string, fetchTimeoutMs: number): Promise<TextSource> {
  if (/^https?:\/\//i.test(where)) {
    const response = await fetch(where, { signal: AbortSignal.timeout(fetchTimeoutMs), redirect: 'error' }).catch((error: unknown) => {
      throw new AuditUsageError(`${where}: ${(error as Error).message}`);
    });
    if (!response.ok) throw new AuditUsageError(`${where}: answered ${response.status}`);
    return { name: where, text: await response.text() };
  }
  try {
    return { name: where, text: await readFile(where, 'utf8') };
  } catch (error) {
    throw new AuditUsageError(`${where}: cannot read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

const DEFAULT_STORE_PREFIX = 'toolgate:';
const isRedisUrl = (where: string): boolean => /^rediss?:\/\//i.test(where);

/** The kept checkpoint lists of these tenants (null: gateway-wide) in a Redis state store (docs/operations.md#tamper-evident-audit). */
async function readStore(url: string, prefix: string, tenants: ReadonlyArray<string | null>): Promise<TextSource[]> {
  const store = createRedisStore({ url, prefix, commandTimeoutMs: 10_000 });
  // The name shown in reports, without a password the URL may hold.
  const label = url.replace(/\/\/[^@/]*@/, '//');
  try {
    return await readStoredCheckpoints(store, tenants, undefined, label);
  } catch (error) {
    throw new AuditUsageError(`${label}: ${(error as Error).message}`);
  } finally {
    await store.close();
  }
}

const at = (found: ChainBreak): string => (found.at ? ` at ${found.at.source}:${found.at.line}` : '');

export function formatReport(report: VerifyReport): string {
  const lines: string[] = [];
  for (const chain of report.chains) {
    const state = chain.break ? `BROKEN ${chain.break.kind}${at(chain.break)}: ${chain.break.message}` : 'OK';
    const unanchored = chain.lastSeq === null ? 0 : chain.lastSeq - chain.anchoredSeq;
    const start = chain.firstSeq !== null && chain.firstSeq > 1 && !chain.break ? `, starts at seq ${chain.firstSeq} after a checkpoint (earlier files not given)` : '';
    lines.push(`chain ${chain.chain}: ${state}${start}; ${chain.events} events, ${chain.verified} verified, anchored to seq ${chain.anchoredSeq} by ${chain.checkpoints} checkpoints${unanchored > 0 && !chain.break ? `, ${unanchored} after the last checkpoint (not anchored)` : ''}`);
  }
  for (const found of report.breaks) if (found.chain === null) lines.push(`BROKEN ${found.kind}${at(found)}: ${found.message}`);
  const events = report.chains.reduce((sum, chain) => sum + chain.events, 0);
  lines.push(
    `${report.ok ? 'OK' : 'BROKEN'}: ${report.chains.length} chains, ${events} events, ${report.checkpoints.valid}/${report.checkpoints.total} checkpoints valid` +
      `, ${report.ignoredLines} other lines skipped, ${report.unchainedLines} unchained audit lines, ${report.tornLines} torn last lines`,
  );
  return `${lines.join('\n')}\n`;
}

/** `toolgate audit <args>`: what to print and the exit code; an AuditUsageError for a wrong command line or input. */
export async function runAuditCli(args: string[]): Promise<AuditCliResult> {
  const [command, ...rest] = args;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') return { stdout: `${AUDIT_USAGE}\n`, exitCode: AUDIT_EXIT.ok };
  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      options: {
        log: { type: 'string', multiple: true },
        checkpoints: { type: 'string', multiple: true },
        'public-keys': { type: 'string', multiple: true },
        json: { type: 'boolean' },
        id: { type: 'string' },
        store: { type: 'string' },
        tenant: { type: 'string', multiple: true },
        'store-prefix': { type: 'string' },
      },
      strict: true,
      allowPositionals: true,
    });
  } catch (error) {
    throw new AuditUsageError(`${(error as Error).message}\n${AUDIT_USAGE}`);
  }
  const { values, positionals } = parsed;
  if (command === 'keygen') {
    if (positionals.length > 0 || (values.id !== undefined && !/^[A-Za-z0-9._-]{1,64}$/.test(values.id))) throw new AuditUsageError(`keygen takes only --id ID ([A-Za-z0-9._-])\n${AUDIT_USAGE}`);
    return { stdout: keygen(values.id), exitCode: AUDIT_EXIT.ok };
  }
  const tenants = values.tenant ?? [];
  const prefix = values['store-prefix'] ?? DEFAULT_STORE_PREFIX;
  if (command === 'checkpoints') {
    if (!values.store || !isRedisUrl(values.store) || positionals.length > 0) throw new AuditUsageError(`checkpoints needs --store redis://…\n${AUDIT_USAGE}`);
    const sources = await readStore(values.store, prefix, [null, ...tenants]);
    return { stdout: sources.map((source) => source.text).join(''), exitCode: AUDIT_EXIT.ok };
  }
  if (command !== 'verify') throw new AuditUsageError(`unknown audit command ${JSON.stringify(command ?? '')}\n${AUDIT_USAGE}`);
  // `--log a.log b.log`: the files after the first are positionals.
  const logs = [...(values.log ?? []), ...positionals];
  if (logs.length === 0 || !values.checkpoints || !values['public-keys']) throw new AuditUsageError(`verify needs --log, --checkpoints and --public-keys\n${AUDIT_USAGE}`);
  const keys = new Map<string, KeyObject>();
  for (const file of values['public-keys']) for (const [id, key] of parsePublicKeys((await readSource(file, 10_000)).text, file)) keys.set(id, key);
  const logSources = await Promise.all(logs.map((file) => readSource(file, 10_000)));
  const inLogs = [...chainsInLogs(logSources)].map(tenantOfChain);
  const checkpoints: TextSource[] = [];
  for (const where of values.checkpoints) {
    if (isRedisUrl(where)) checkpoints.push(...(await readStore(where, prefix, [null, ...inLogs, ...tenants])));
    else checkpoints.push(await readSource(where, 10_000));
  }
  const report = verifyAudit({ logs: logSources, checkpoints, publicKeys: keys });
  return { stdout: values.json ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report), exitCode: report.ok ? AUDIT_EXIT.ok : AUDIT_EXIT.broken };
}
