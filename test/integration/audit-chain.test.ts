// Hash-chained, signed audit: two replicas and two tenants verify OK, and each kind of tampering with the
// log or the checkpoints is detected and named by the offline verifier (docs/operations.md#tamper-evident-audit).
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuditChain, eventHash, LINE_ENVELOPE_FIELDS } from '../../src/audit/chain.js';
import { runAuditCli } from '../../src/audit/cli.js';
import { auditLine } from '../../src/audit/line.js';
import type { AuditEvent } from '../../src/audit/types.js';
import { verifyAudit, type TextSource, type VerifyReport } from '../../src/audit/verify.js';
import { API_KEY, bearer, buildTestApp, signToken, testConfig } from '../helpers/build.js';

const pair = (): { privatePem: string; publicKey: KeyObject; publicPem: string } => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return { privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), publicKey, publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
};
const k1 = pair();
const k2 = pair();

let dir: string;
const logA = (): string => join(dir, 'replica-a.log');
const logB = (): string => join(dir, 'replica-b.log');
const checkpointsFile = (): string => join(dir, 'checkpoints.log');
let texts: { a: string; b: string; checkpoints: string };

function replica(log: string, keys: Array<{ id: string; privateKey: string }>): Promise<FastifyInstance> {
  return buildTestApp(
    testConfig({
      audit: { sink: 'file', path: log, chain: { checkpointEvery: 4, checkpointSeconds: 3600, checkpoints: { sink: 'file', path: checkpointsFile() }, signing: { keys } } },
    }),
  );
}

const execute = (app: FastifyInstance, token: string, city: string) =>
  app.inject({ method: 'POST', url: '/v1/execute', headers: bearer(token), payload: { name: 'get_weather', arguments: { city } } });

const verify = (logs: { a?: string; b?: string }, checkpoints = texts.checkpoints, keys: Record<string, KeyObject> = { k1: k1.publicKey, k2: k2.publicKey }): VerifyReport =>
  verifyAudit({
    logs: [...(logs.a === undefined ? [] : [{ name: 'a.log', text: logs.a }]), ...(logs.b === undefined ? [] : [{ name: 'b.log', text: logs.b }])] as TextSource[],
    checkpoints: [{ name: 'checkpoints.log', text: checkpoints }],
    publicKeys: new Map(Object.entries(keys)),
  });

const lines = (text: string): string[] => text.split('\n').filter(Boolean);
const join_ = (list: string[]): string => `${list.join('\n')}\n`;
const parse = (line: string): Record<string, unknown> => JSON.parse(line) as Record<string, unknown>;
/** Indexes (0-based) of replica A's lines of one chain, in log order. */
const chainLines = (text: string, tenant: string): number[] =>
  lines(text).flatMap((line, index) => ((parse(line).chain as string).endsWith(`/${tenant}`) ? [index] : []));
/** The line with one character of its requestId changed: still JSON, still an audit line. */
const editByte = (line: string): string => {
  const at = line.indexOf('"requestId":"') + '"requestId":"'.length;
  return `${line.slice(0, at)}${line[at] === 'x' ? 'y' : 'x'}${line.slice(at + 1)}`;
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tg-audit-chain-'));
  const acme = await signToken({ sub: 'alice', tenant: 'acme' });
  const globex = await signToken({ sub: 'gina', tenant: 'globex' });
  // Replica A starts on k1; B on k2 with k1 kept for publishing: the key was rotated between them.
  const a = await replica(logA(), [{ id: 'k1', privateKey: k1.privatePem }]);
  const b = await replica(logB(), [{ id: 'k2', privateKey: k2.privatePem }, { id: 'k1', privateKey: k1.privatePem }]);
  for (let round = 0; round < 6; round += 1) {
    for (const app of [a, b]) {
      expect((await execute(app, acme, `acme-${round}`)).statusCode).toBe(200);
      expect((await execute(app, globex, `globex-${round}`)).statusCode).toBe(200);
    }
  }
  // A refused token: the gateway-wide chain. A read of the audit: into acme's chain.
  expect((await a.inject({ method: 'GET', url: '/v1/tools', headers: bearer('not-a-token') })).statusCode).toBe(401);
  expect((await a.inject({ method: 'GET', url: '/v1/admin/audit?tool=get_weather&limit=5', headers: bearer(API_KEY) })).statusCode).toBe(200);
  await a.close();
  await b.close();
  texts = { a: await readFile(logA(), 'utf8'), b: await readFile(logB(), 'utf8'), checkpoints: await readFile(checkpointsFile(), 'utf8') };
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('audit chain: an untouched log verifies', () => {
  it('two replicas, two tenants and the gateway-wide chain verify OK, every event anchored by the shutdown checkpoint', () => {
    const report = verify({ a: texts.a, b: texts.b });
    expect(report.breaks).toEqual([]);
    expect(report.ok).toBe(true);
    // A: acme (6 calls + the audit read), globex (6), gateway-wide (the refused token); B: acme, globex.
    expect(report.chains.map((chain) => [chain.chain.split('/')[1] ?? '(gateway)', chain.events])).toEqual(
      expect.arrayContaining([['acme', 7], ['globex', 6], ['(gateway)', 1], ['acme', 6], ['globex', 6]]),
    );
    expect(report.chains).toHaveLength(5);
    for (const chain of report.chains) {
      expect(chain.verified).toBe(chain.events);
      expect(chain.anchoredSeq).toBe(chain.lastSeq);
    }
    // Checkpoints from both keys (the rotation): every one of them valid.
    const keyIds = new Set(lines(texts.checkpoints).map((line) => parse(line).keyId));
    expect(keyIds).toEqual(new Set(['k1', 'k2']));
    expect(report.checkpoints.valid).toBe(report.checkpoints.total);
  });

  it('keeps the existing fields of a call line and adds chain, seq and prev; the read of the audit is an event of its own', () => {
    const first = parse(lines(texts.a)[0]!);
    // The same fields as an unchained line, plus chain, seq and prev; the event's fields in canonical order,
    // since the line is written from the text its link hashed (src/audit/line.ts).
    const eventFields = ['time', 'event', 'requestId', 'callId', 'tenant', 'user', 'tool', 'source', 'argsSha256', 'outcome', 'errorType', 'durationMs', 'approvalId', 'chain', 'seq', 'prev'];
    expect(Object.keys(first)).toEqual(['level', 'pid', 'hostname', ...eventFields.sort(), 'msg']);
    expect(first).toMatchObject({ event: 'call', seq: 1, prev: null, tenant: 'acme' });
    const read = lines(texts.a).map(parse).find((line) => line.event === 'audit_read');
    expect(read).toMatchObject({ tenant: 'acme', user: 'ci-bot', via: 'list', filter: { tool: 'get_weather', limit: 5 }, seq: 7 });
  });

  it('the hash of a line is SHA-256 over the canonical JSON of its event, pino fields left out', () => {
    const [first, second] = chainLines(texts.a, 'acme').map((index) => parse(lines(texts.a)[index]!));
    const event = Object.fromEntries(Object.entries(first!).filter(([key]) => !LINE_ENVELOPE_FIELDS.has(key)));
    expect(second!.prev).toBe(eventHash(event));
  });
});

describe('audit chain: the forms a log comes in', () => {
  it('a stdout capture: log lines between the audit lines are skipped', () => {
    const mixed = lines(texts.a).flatMap((line, index) => [`{"level":30,"time":1,"pid":1,"hostname":"gw","msg":"incoming request ${index}"}`, 'plain text from a wrapper', line]);
    const report = verify({ a: join_(mixed), b: texts.b });
    expect(report.ok).toBe(true);
    expect(report.ignoredLines).toBe(2 * lines(texts.a).length);
  });

  it('rotated files, oldest first; a chain whose older lines are gone verifies only from a checkpointed seq', () => {
    const all = lines(texts.a);
    const split = verifyAudit({
      logs: [{ name: 'a.log.1', text: join_(all.slice(0, 7)) }, { name: 'a.log', text: join_(all.slice(7)) }, { name: 'b.log', text: texts.b }],
      checkpoints: [{ name: 'checkpoints.log', text: texts.checkpoints }],
      publicKeys: new Map([['k1', k1.publicKey], ['k2', k2.publicKey]]),
    });
    expect(split.ok).toBe(true);
    // acme's lines up to a checkpointed seq deleted (the retention cut its file there): the rest verifies from it.
    const acme = chainLines(texts.a, 'acme');
    const chainName = parse(all[acme[0]!]!).chain as string;
    const checkpointed = lines(texts.checkpoints).map(parse).filter((record) => record.chain === chainName).map((record) => record.seq as number);
    const cut = Math.min(...checkpointed);
    const kept = all.filter((_, index) => !acme.slice(0, cut).includes(index));
    const anchored = verify({ a: join_(kept), b: texts.b });
    expect(anchored.ok).toBe(true);
    expect(anchored.chains.find((chain) => chain.chain === chainName)).toMatchObject({ firstSeq: cut + 1, anchoredSeq: 7 });
    // Cut one line further, at a seq no checkpoint signed: the start is not anchored, the lines before it are missing.
    const unanchored = all.filter((_, index) => !acme.slice(0, cut + 1).includes(index));
    expect(verify({ a: join_(unanchored), b: texts.b }).breaks.map((found) => [found.kind, found.seq])).toEqual([['removed', cut + 2]]);
  });
});

describe('audit chain: tampering is detected and named', () => {
  it('editing one byte of any line', () => {
    const all = lines(texts.a);
    for (const [index, line] of all.entries()) {
      const edited = [...all];
      edited[index] = editByte(line);
      const report = verify({ a: join_(edited), b: texts.b });
      expect(report.ok, `line ${index + 1}`).toBe(false);
      expect(report.breaks.map((found) => [found.kind, found.at?.line]), `line ${index + 1}`).toEqual([['edited', index + 1]]);
    }
  });

  it('deleting a line', () => {
    const all = lines(texts.a);
    const victim = chainLines(texts.a, 'acme')[2]!;
    const report = verify({ a: join_(all.filter((_, index) => index !== victim)), b: texts.b });
    expect(report.breaks.map((found) => [found.kind, found.seq])).toEqual([['removed', 4]]);
  });

  it('swapping two lines of a chain', () => {
    const all = lines(texts.a);
    const [, x, y] = chainLines(texts.a, 'globex');
    [all[x!], all[y!]] = [all[y!]!, all[x!]!];
    const report = verify({ a: join_(all), b: texts.b });
    expect(report.breaks.map((found) => [found.kind, found.seq])).toEqual([['reordered', 3]]);
  });

  it('inserting a forged line, even one that links to the line before it', () => {
    const all = lines(texts.a);
    const after = chainLines(texts.a, 'acme')[1]!;
    const genuine = parse(all[after]!);
    const { level: _l, pid: _p, hostname: _h, msg: _m, ...event } = genuine;
    const forged = auditLine({ ...(event as unknown as AuditEvent), requestId: 'forged', user: 'mallory', seq: (genuine.seq as number) + 1, prev: eventHash(event) });
    all.splice(after + 1, 0, forged.trimEnd());
    const report = verify({ a: join_(all), b: texts.b });
    expect(report.breaks.map((found) => found.kind)).toEqual(['inserted']);
  });

  it('truncating the tail before the last checkpoint (a tail after it is not anchored, and is not detectable)', () => {
    const all = lines(texts.a);
    const report = verify({ a: join_(all.slice(0, -3)), b: texts.b });
    expect(report.breaks.map((found) => found.kind)).toContain('truncated');
    expect(report.ok).toBe(false);
  });

  it('replacing the whole file with a consistent forged chain', () => {
    // The forger knows the chain ids and the format, not the signing key: it re-links its own events.
    const all = lines(texts.a).map(parse);
    const instance = (all[0]!.chain as string).split('/')[0]!;
    const forger = createAuditChain(instance);
    const forged = all.map((line) => {
      const { level: _l, pid: _p, hostname: _h, msg: _m, chain: _c, seq: _s, prev: _v, ...event } = line;
      return auditLine(forger.link({ ...(event as unknown as AuditEvent), user: 'nobody' })).trimEnd();
    });
    const report = verify({ a: join_(forged), b: texts.b });
    expect(report.ok).toBe(false);
    // A chain of several events is named rewritten (a one-event chain can only be seen as that event edited).
    const long = report.chains.filter((chain) => chain.chain.startsWith(instance) && chain.events > 1);
    expect(long.map((chain) => chain.break?.kind)).toEqual(long.map(() => 'rewritten'));
    // The forged chains themselves link: only the anchor outside the log catches them.
    for (const chain of report.chains.filter((c) => c.chain.startsWith(instance))) expect(chain.verified).toBe(chain.events);
  });

  it('a checkpoint signed by a key the verifier does not know is refused; a rotated key verifies old and new checkpoints', () => {
    const onlyNew = verify({ a: texts.a, b: texts.b }, texts.checkpoints, { k2: k2.publicKey });
    expect(onlyNew.ok).toBe(false);
    expect(new Set(onlyNew.breaks.map((found) => found.kind))).toEqual(new Set(['unknown-key']));
    const both = verify({ a: texts.a, b: texts.b });
    expect(both.ok).toBe(true);
  });

  it('a checkpoint whose signature does not verify', () => {
    const all = lines(texts.checkpoints);
    const record = parse(all[0]!);
    all[0] = JSON.stringify({ ...record, seq: (record.seq as number) + 1 });
    const report = verify({ a: texts.a, b: texts.b }, join_(all));
    expect(report.breaks.map((found) => [found.kind, found.at?.line])).toEqual([['signature-bad', 1]]);
  });
});

describe('toolgate audit verify (the CLI)', () => {
  it('exits 0 with counts on a good log, 1 naming the break on a broken one, 2 on a wrong command line', async () => {
    const keys = join(dir, 'keys.pem');
    await writeFile(keys, `# key-id: k1\n${k1.publicPem}\n# key-id: k2\n${k2.publicPem}`);
    const good = await runAuditCli(['verify', '--log', logA(), logB(), '--checkpoints', checkpointsFile(), '--public-keys', keys]);
    expect(good.exitCode).toBe(0);
    expect(good.stdout).toMatch(/^OK: 5 chains, 26 events, (\d+)\/\1 checkpoints valid/m);
    const all = lines(texts.a);
    const broken = join(dir, 'broken.log');
    await writeFile(broken, join_(all.filter((_, index) => index !== 1)));
    const bad = await runAuditCli(['verify', '--log', broken, logB(), '--checkpoints', checkpointsFile(), '--public-keys', keys]);
    expect(bad.exitCode).toBe(1);
    expect(bad.stdout).toMatch(/BROKEN (removed|truncated) at /);
    await expect(runAuditCli(['verify', '--log', logA()])).rejects.toThrow(/needs --log, --checkpoints and --public-keys/);
    await expect(runAuditCli(['verify', '--bogus'])).rejects.toThrow(/Unknown option/);
    expect(await runAuditCli(['help'])).toMatchObject({ exitCode: 0, stdout: expect.stringContaining('toolgate audit verify --log FILE') });
  });

  it('keygen prints an Ed25519 key pair the verifier and the config accept', async () => {
    const { stdout } = await runAuditCli(['keygen', '--id', 'k9']);
    expect(stdout).toContain('-----BEGIN PRIVATE KEY-----');
    expect(stdout).toMatch(/# key-id: k9\n-----BEGIN PUBLIC KEY-----/);
    const { parsePublicKeys } = await import('../../src/audit/cli.js');
    expect([...parsePublicKeys(stdout).keys()]).toEqual(['k9']);
  });
});
