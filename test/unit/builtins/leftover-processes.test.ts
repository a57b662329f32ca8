import { readdirSync, readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ProcessInfo } from '../../../src/builtins/background-processes.js';
import { createSandbox, failure, type Sandbox, testableSandboxes } from './helpers.js';

// Issue 15 item 11: processes outliving their call (`cmd &`, `setsid cmd`) kept running, uncounted and
// untouched at shutdown. Each test uses its own `sleep` durations so its processes can be told apart.


/** Live (not zombie) processes whose command line is exactly `sleep <seconds>`. */
function sleeping(seconds: number): number {
  let count = 0;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8') !== `sleep\0${seconds}\0`) continue;
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (!/^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2))) count += 1;
    } catch {
      // gone meanwhile
    }
  }
  return count;
}

const gone = (seconds: number) => expect.poll(() => sleeping(seconds), { timeout: 3000, interval: 25 }).toBe(0);

let unique = 3000 + Math.floor(Math.random() * 5000) * 10;
const nextSeconds = () => (unique += 1);

describe.each(testableSandboxes)('processes a command leaves behind, under sandbox: %s', (sandbox) => {
  let sb: Sandbox;
  beforeEach(async () => {
    sb = await createSandbox({ sandbox, allowUnsandboxedShell: true }, { maxProcessesPerCommand: 20, maxProcesses: 4 });
  });
  afterEach(() => sb.cleanup());

  it('kills `cmd &`, `setsid cmd &` and a setsid double fork when the exec call ends', async () => {
    const [plain, setsid, orphan] = [nextSeconds(), nextSeconds(), nextSeconds()];
    const out = (await sb.run('bash', { command: `sleep ${plain} & setsid sleep ${setsid} & (setsid sleep ${orphan} >/dev/null 2>&1 &); sleep 0.2; echo started` })) as { stdout: string };
    expect(out.stdout).toBe('started\n');
    await gone(plain);
    await gone(setsid);
    await gone(orphan);
  });

  it('kills what a background process left behind when it ends, when it is stopped, and at shutdown', async () => {
    const [leftover, stopped, atShutdown, setsidAtShutdown] = [nextSeconds(), nextSeconds(), nextSeconds(), nextSeconds()];
    await sb.run('bash', { action: 'start', command: `setsid sleep ${leftover} >/dev/null 2>&1 & echo bye` });
    await gone(leftover);
    const running = (await sb.run('bash', { action: 'start', command: `setsid sleep ${stopped} & sleep 1000` })) as ProcessInfo;
    await expect.poll(() => sleeping(stopped), { timeout: 3000, interval: 25 }).toBe(1);
    await sb.run('bash', { action: 'stop', processId: running.processId });
    await gone(stopped);
    await sb.run('bash', { action: 'start', command: `sleep ${atShutdown} & (setsid sleep ${setsidAtShutdown} >/dev/null 2>&1 &); sleep 1000` });
    await expect.poll(() => sleeping(atShutdown) + sleeping(setsidAtShutdown), { timeout: 3000, interval: 25 }).toBe(2);
    await sb.provider.closeAll();
    await gone(atShutdown);
    await gone(setsidAtShutdown);
  });

  it('kills a command that forks more processes than maxProcessesPerCommand, and answers why', async () => {
    const seconds = nextSeconds();
    const err = await failure(sb.run('bash', { command: `for i in $(seq 300); do setsid sleep ${seconds} & done; wait` }));
    expect(err).toEqual({ errorType: 'TOOL_EXCEPTION', message: expect.stringContaining('more than 20 processes') });
    await gone(seconds);
    // The same cap holds for a background process; its log says why it ended.
    const loop = (await sb.run('bash', { action: 'start', command: `for i in $(seq 300); do sleep ${seconds} & done; wait` })) as ProcessInfo;
    await expect.poll(async () => ((await sb.run('bash', { action: 'status', processId: loop.processId })) as ProcessInfo).status, { timeout: 5000, interval: 50 }).not.toBe('RUNNING');
    expect(((await sb.run('bash', { action: 'logs', processId: loop.processId })) as { content: string }).content).toContain('more than 20 processes');
    await gone(seconds);
  });
});
