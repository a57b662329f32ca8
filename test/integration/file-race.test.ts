import { spawn } from 'node:child_process';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, principal, type Sandbox } from '../unit/builtins/helpers.js';

// The attack of issue 15: a tenant swaps a folder of its own workspace for a symlink to a victim folder in a
// tight loop while its file-tool calls go through that folder. Every operation is hammered at once for one
// window; nothing outside the attacker's workspace may change or be read.
const RACE_MS = Number(process.env.TOOLGATE_RACE_MS ?? 10_000);
const MAX_CALLS_PER_WORKER = 20_000;
const VICTIM_FILES = 50;

// Swaps `<dir>` (a real folder or file) for a symlink to `<target>` and back, as fast as it can, until the deadline.
const SWAPPER = `
const fs = require('node:fs');
const [deadline, ...pairs] = process.argv.slice(1);
const swaps = [];
for (let i = 0; i < pairs.length; i += 2) swaps.push([pairs[i], pairs[i + 1]]);
const quiet = (f) => { try { f(); } catch {} };
let rounds = 0;
while (Date.now() < Number(deadline)) {
  for (const [dir, target] of swaps) {
    quiet(() => fs.renameSync(dir, dir + '.real'));
    quiet(() => fs.symlinkSync(target, dir));
    quiet(() => fs.unlinkSync(dir));
    // A tool may have created the folder while it was missing: drop that copy so the swap goes on.
    quiet(() => { if (fs.existsSync(dir + '.real') && fs.lstatSync(dir).isDirectory()) fs.rmSync(dir, { recursive: true, force: true }); });
    quiet(() => fs.renameSync(dir + '.real', dir));
  }
  rounds += 1;
}
process.stdout.write(String(rounds));
`;

/** Every path under `dir` with its content (files) or a trailing slash (folders). */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    const full = path.join(entry.parentPath, entry.name);
    const key = path.relative(dir, full);
    out[key] = entry.isFile() ? await readFile(full, 'utf8') : entry.isDirectory() ? '/' : `<${entry.isSymbolicLink() ? 'link' : 'other'}>`;
  }
  return out;
}

function diff(label: string, before: Record<string, string>, after: Record<string, string>): Record<string, number> {
  const removed = Object.keys(before).filter((key) => !(key in after)).length;
  const changed = Object.keys(before).filter((key) => key in after && after[key] !== before[key]).length;
  const added = Object.keys(after).filter((key) => !(key in before)).length;
  return { [`${label}Removed`]: removed, [`${label}Changed`]: changed, [`${label}Added`]: added };
}

describe('file tools under a parent folder swapped for a symlink (issue 15 items 1 and 2)', () => {
  let sb: Sandbox;
  let attacker: string;
  let victimDir: string;
  let outsideDir: string;
  const mallory = principal('mallory');

  beforeAll(async () => {
    sb = await createSandbox();
    await sb.run('glob', { pattern: '*' }, principal('victim'));
    await sb.run('glob', { pattern: '*' }, mallory);
    attacker = path.join(sb.workspaces, 'mallory');
    victimDir = path.join(sb.workspaces, 'victim', 'vdir');
    outsideDir = path.join(sb.outside, 'odir');
    for (const dir of [victimDir, outsideDir]) {
      await mkdir(dir, { recursive: true });
      for (let i = 0; i < VICTIM_FILES; i += 1) await writeFile(path.join(dir, `v_${i}.txt`), `VICTIM ${i}\nline two\n`);
      await writeFile(path.join(dir, 'victim-only.txt'), 'VICTIM\n');
    }
    await writeFile(path.join(sb.workspaces, 'victim', 'AGENTS.md'), 'VICTIM notes\n');
  });
  afterAll(() => sb.cleanup());

  it(`changes nothing outside the attacker's workspace and returns no victim content (${RACE_MS} ms window)`, async () => {
    const before = { victim: await snapshot(path.join(sb.workspaces, 'victim')), outside: await snapshot(sb.outside) };
    // The attacker's own folders hold files of the same names, so every call has something legitimate to touch.
    for (const name of ['ddir', 'odir']) {
      await mkdir(path.join(attacker, name), { recursive: true });
      for (let i = 0; i < VICTIM_FILES; i += 1) await writeFile(path.join(attacker, name, `v_${i}.txt`), `mine ${i}\nline two\n`);
    }

    const deadline = Date.now() + RACE_MS;
    await writeFile(path.join(attacker, 'AGENTS.md'), 'mine\n');
    const swaps = [path.join(attacker, 'ddir'), victimDir, path.join(attacker, 'odir'), outsideDir, path.join(attacker, 'AGENTS.md'), path.join(sb.workspaces, 'victim', 'AGENTS.md')];
    const swapper = spawn(process.execPath, ['-e', SWAPPER, String(deadline), ...swaps], { stdio: ['ignore', 'pipe', 'inherit'] });
    let swapRounds = '';
    swapper.stdout.on('data', (chunk: Buffer) => (swapRounds += chunk.toString()));
    const swapperDone = new Promise<void>((resolve) => swapper.on('exit', () => resolve()));

    const leaks: string[] = [];
    const counts: Record<string, { calls: number; ok: number }> = {};
    const operations: Record<string, (dir: string, n: number) => Promise<void>> = {
      read_file: async (dir, n) => {
        const out = (await sb.run('read_file', { path: `${dir}/v_${n % VICTIM_FILES}.txt` }, mallory)) as { content: string };
        if (out.content.includes('VICTIM')) leaks.push(`read_file returned ${JSON.stringify(out.content)}`);
      },
      // Even calls create folders; odd ones put back a file the deletes took away.
      write_file: async (dir, n) => {
        const target = n % 2 === 0 ? `${dir}/new_${n % 7}/w_${n % 20}.txt` : `${dir}/v_${n % VICTIM_FILES}.txt`;
        await sb.run('write_file', { path: target, content: `mine ${n}\nline two\n` }, mallory);
      },
      edit: async (dir, n) => {
        const [from, to] = n % 2 === 0 ? ['line two', 'line 2'] : ['line 2', 'line two'];
        await sb.run('edit', { path: `${dir}/v_${n % VICTIM_FILES}.txt`, old_string: from, new_string: to }, mallory);
      },
      apply_patch_delete: async (dir, n) => {
        await sb.run('apply_patch', { patch: `*** Begin Patch\n*** Delete File: ${dir}/v_${n % VICTIM_FILES}.txt\n*** End Patch` }, mallory);
      },
      apply_patch_add: async (dir, n) => {
        await sb.run('apply_patch', { patch: `*** Begin Patch\n*** Add File: ${dir}/add_${n % 5}/a_${n}.txt\n+added\n*** End Patch` }, mallory);
      },
      apply_patch_update: async (dir, n) => {
        await sb.run('apply_patch', { patch: `*** Begin Patch\n*** Update File: ${dir}/v_${n % VICTIM_FILES}.txt\n@@\n-line two\n+LINE TWO\n*** End Patch` }, mallory);
      },
      glob: async (dir) => {
        const out = (await sb.run('glob', { pattern: '**', path: dir }, mallory)) as { matches: string[] };
        if (out.matches.some((m) => m.includes('victim-only'))) leaks.push('glob listed a victim file');
      },
      // AGENTS.md itself is swapped for a link to the victim's.
      update_agents_md: async (_dir, n) => {
        const out = (await sb.run('update_agents_md', n % 2 === 0 ? { action: 'read' } : { action: 'write', content: `mine ${n}\n` }, mallory)) as { content?: string };
        if (out.content?.includes('VICTIM')) leaks.push('update_agents_md read the victim notes');
      },
      grep: async (dir) => {
        const out = (await sb.run('grep', { pattern: 'VICTIM', path: dir, include: 'v*.txt' }, mallory)) as { totalMatches: number };
        if (out.totalMatches > 0) leaks.push(`grep found ${out.totalMatches} victim lines`);
      },
    };
    const worker = async (name: string, dir: string) => {
      const count = (counts[`${name} ${dir}`] ??= { calls: 0, ok: 0 });
      for (let n = 0; n < MAX_CALLS_PER_WORKER && Date.now() < deadline; n += 1) {
        count.calls += 1;
        try {
          await operations[name]!(dir, n);
          count.ok += 1;
        } catch {
          // Refusals are expected; only effects outside the workspace count.
        }
      }
    };
    await Promise.all(Object.keys(operations).flatMap((name) => (name === 'update_agents_md' ? ['.'] : ['ddir', 'odir']).map((dir) => worker(name, dir))));
    await swapperDone;

    const after = { victim: await snapshot(path.join(sb.workspaces, 'victim')), outside: await snapshot(sb.outside) };
    const total = Object.values(counts).reduce((sum, c) => sum + c.calls, 0);
    console.log(`file race: ${total} calls, swapper rounds ${swapRounds}, ${JSON.stringify(counts)}`);
    expect(Number(swapRounds)).toBeGreaterThan(100);
    expect(total).toBeGreaterThan(200);
    // Counted, so a failure says how much went wrong; then compared in full.
    const effects = { leaks: leaks.length, ...diff('victim', before.victim, after.victim), ...diff('outside', before.outside, after.outside) };
    expect(effects).toEqual({ leaks: 0, victimRemoved: 0, victimChanged: 0, victimAdded: 0, outsideRemoved: 0, outsideChanged: 0, outsideAdded: 0 });
    expect(after).toEqual(before);
    // The attacker's own folder still works once the swapping stops.
    expect((await stat(path.join(attacker, 'ddir'))).isDirectory()).toBe(true);
    await sb.run('write_file', { path: 'ddir/after.txt', content: 'fine' }, mallory);
    expect(((await sb.run('read_file', { path: 'ddir/after.txt' }, mallory)) as { content: string }).content).toBe('fine');
  }, RACE_MS + 60_000);
});
