import { describe, expect, it } from 'vitest';
import { childNodeFlags, splitNodeOptions } from '../../../src/snapshot/child-node-flags.js';

// Which of the gateway's node flags the start's check child takes (src/snapshot/child-node-flags.ts): how modules load
// and what the process may do, not a second debugger, profiler, report, watcher or heap size.
describe('the start check child\'s node flags', () => {
  it('keeps module loading flags with their values, written either way', () => {
    expect(childNodeFlags(['--require', './apm.cjs', '--import=tsx', '--loader', './pnp.mjs', '-C', 'custom', '--enable-source-maps', '--experimental-vm-modules', '--no-experimental-strip-types'], undefined)).toEqual([
      '--require', './apm.cjs', '--import=tsx', '--loader', './pnp.mjs', '-C', 'custom', '--enable-source-maps', '--experimental-vm-modules', '--no-experimental-strip-types',
    ]);
  });

  it('keeps the permission model and hardening', () => {
    expect(childNodeFlags(['--permission', '--allow-fs-read', '/srv', '--allow-fs-write=/tmp', '--allow-child-process', '--frozen-intrinsics', '--disable-proto=throw'], undefined)).toEqual([
      '--permission', '--allow-fs-read', '/srv', '--allow-fs-write=/tmp', '--allow-child-process', '--frozen-intrinsics', '--disable-proto=throw',
    ]);
  });

  it('drops debuggers, profilers, reports, watchers, heap sizes and scripts, with their values', () => {
    const dropped = ['--inspect', '--inspect-brk=0.0.0.0:9229', '--inspect-port', '9230', '--cpu-prof', '--cpu-prof-dir', '/prof', '--heap-prof', '--prof', '--max-old-space-size=4096', '--max-semi-space-size', '64', '--heapsnapshot-signal', 'SIGUSR2', '--report-on-signal', '--watch', '--watch-path', 'src', '--title', 'toolgate', '-e', 'code()', '--trace-gc'];
    expect(childNodeFlags([...dropped, '--require', 'kept.cjs'], undefined)).toEqual(['--require', 'kept.cjs']);
  });

  it('reads NODE_OPTIONS first, as node does, and splits it as node does', () => {
    expect(childNodeFlags(['--import', 'b.mjs'], '--inspect --require "/opt/my agent/start.cjs" --cpu-prof')).toEqual(['--require', '/opt/my agent/start.cjs', '--import', 'b.mjs']);
    expect(splitNodeOptions('  --a   "b c"  --d="e \\" f" ')).toEqual(['--a', 'b c', '--d=e " f']);
    expect(splitNodeOptions('')).toEqual([]);
  });
});
