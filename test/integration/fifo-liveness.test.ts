import { execFileSync } from 'node:child_process';
import { closeSync, constants as fsc, openSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, signToken, testConfig } from '../helpers/build.js';

// Issue 15 item 3: `mkfifo q1..q4` then read_file on them blocked all four libuv pool threads in open(), and
// other tenants' fresh JWTs (verified on that pool) got no answer. More FIFOs than pool threads here.
const FIFOS = ['q1', 'q2', 'q3', 'q4', 'q5', 'q6'];
const LIVENESS_MS = 1000;
const PROMPT_MS = 5000;

let app: FastifyInstance | undefined;
let dir: string;
let acmeWorkspace: string;

/** Opens the other end of every FIFO without blocking, so a call stuck in open() (old code) can finish. */
function unblockFifos(): void {
  for (const name of [...FIFOS, 'AGENTS.md']) {
    for (const flags of [fsc.O_WRONLY | fsc.O_NONBLOCK, fsc.O_RDONLY | fsc.O_NONBLOCK]) {
      try {
        closeSync(openSync(path.join(acmeWorkspace, name), flags));
      } catch {
        // No one waiting on this end, or not a FIFO.
      }
    }
  }
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'toolgate-fifo-'));
  app = await buildTestApp(testConfig({ builtins: { workspaceRoot: dir }, tenants: { acme: { builtins: 'all' }, globex: { builtins: 'all' } } }));
  acmeWorkspace = path.join(dir, 'acme');
  const acme = bearer(await signToken({ tenant: 'acme' }));
  await execute(acme, 'write_file', { path: 'plain.txt', content: 'plain\n' });
  await execute(bearer(await signToken({ tenant: 'globex' })), 'write_file', { path: 'mine.txt', content: 'globex data\n' });
  execFileSync('mkfifo', [...FIFOS, 'AGENTS.md'], { cwd: acmeWorkspace });
});
afterAll(async () => {
  unblockFifos();
  await app?.close();
  await rm(dir, { recursive: true, force: true });
});

function execute(headers: Record<string, string>, name: string, args: Record<string, unknown>) {
  return app!.inject({ method: 'POST', url: '/v1/execute', headers, payload: { name, arguments: args } });
}

/** The call's answer and how long it took, or `undefined` when it did not answer within `ms`. */
async function within<T>(ms: number, promise: Promise<T>): Promise<{ value: T; ms: number } | undefined> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  try {
    return await Promise.race([promise.then((value) => ({ value, ms: performance.now() - started })), late]);
  } finally {
    clearTimeout(timer);
  }
}

describe('FIFOs in a workspace (issue 15 item 3)', () => {
  it('every file tool refuses a FIFO promptly, and another tenant with a fresh JWT answers within 1 s meanwhile', async () => {
    const acme = bearer(await signToken({ tenant: 'acme' }));
    // New tokens, signed before the attack (signing uses the same pool): none is in the gateway's cache, so
    // each is verified while the attack runs.
    const fresh = await Promise.all([0, 1, 2, 3, 4].map(async (i) => bearer(await signToken({ tenant: 'globex', sub: `user-${i}`, nonce: `${Date.now()}-${i}` }))));
    const attacks: [string, Record<string, unknown>][] = [
      ...FIFOS.map((name): [string, Record<string, unknown>] => ['read_file', { path: name }]),
      ['edit', { path: 'q1', old_string: 'a', new_string: 'b' }],
      ['write_file', { path: 'q2', content: 'x' }],
      ['write_file', { path: 'q3', content: 'x', mode: 'append' }],
      ['grep', { pattern: 'x', path: 'q4' }],
      ['apply_patch', { patch: '*** Begin Patch\n*** Update File: q5\n@@\n-a\n+b\n*** End Patch' }],
      ['apply_patch', { patch: '*** Begin Patch\n*** Delete File: q6\n*** End Patch' }],
      ['update_agents_md', { action: 'read' }],
      ['update_agents_md', { action: 'append', content: 'x' }],
    ];
    const attackCalls = attacks.map(([name, args]) => within(PROMPT_MS, execute(acme, name, args)));
    // A walk over the folder skips the FIFOs quietly and still finds the plain file.
    const walked = within(PROMPT_MS, execute(acme, 'grep', { pattern: 'plain' }));

    const others: ({ ms: number; status: number; ok: boolean } | undefined)[] = [];
    try {
      for (const token of fresh) {
        const answered = await within(LIVENESS_MS, execute(token, 'read_file', { path: 'mine.txt' }));
        others.push(answered && { ms: Math.round(answered.ms), status: answered.value.statusCode, ok: answered.value.json().ok });
      }
      const results = await Promise.all(attackCalls);
      const grepped = await walked;
      console.log(`fifo liveness: other tenant ${JSON.stringify(others.map((o) => o?.ms ?? 'no answer'))} ms; fifo calls ${JSON.stringify(results.map((r) => (r ? Math.round(r.ms) : 'no answer')))} ms`);
      expect(others).toEqual(others.map(() => ({ ms: expect.any(Number), status: 200, ok: true })));
      results.forEach((result, i) => {
        expect(result, `${attacks[i]![0]} answered`).toBeDefined();
        expect(result!.value.json().error, `${attacks[i]![0]} ${JSON.stringify(attacks[i]![1])}`).toMatchObject({ errorType: 'VALIDATION_ERROR', error: expect.stringMatching(/^not a regular file: (q\d|AGENTS\.md)$/) });
      });
      expect(JSON.parse(grepped!.value.json().output)).toMatchObject({ matches: [{ file: 'plain.txt', line: 1, content: 'plain' }] });
    } finally {
      unblockFifos();
    }
  });
});
