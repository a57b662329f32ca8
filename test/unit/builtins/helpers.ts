import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createBuiltinProvider, type BuiltinProvider, type BuiltinProviderDeps } from '../../../src/builtins/index.js';
import { findExecutable } from '../../../src/builtins/sandbox.js';
import type { BuiltinsConfig } from '../../../src/config/types.js';
import type { JsonObject, Logger, Tool, ToolContext } from '../../../src/call/types.js';
import type { Principal } from '../../../src/call/principal.js';

export function principal(tenant: string, user = 'alice'): Principal {
  return { tenant, user, roles: [], claims: {} };
}

export function context(who: Principal, signal: AbortSignal = new AbortController().signal): ToolContext {
  return { principal: who, callId: 'call_test', requestId: 'req_test', signal, log: {} as Logger, depth: 0 };
}

export function builtinsConfig(workspaceRoot: string, overrides: Partial<BuiltinsConfig> = {}, limits: Partial<BuiltinsConfig['limits']> = {}): BuiltinsConfig {
  return {
    workspaceRoot,
    perUser: false,
    readOnlyRoots: [],
    sandbox: 'none',
    // These tests are about the tools themselves; the refusal of an unsandboxed shell has its own test.
    allowUnsandboxedShell: true,
    ...overrides,
    limits: { maxReadChars: 12000, commandTimeoutMs: 10_000, maxOutputBytes: 1024 * 1024, maxProcesses: 3, maxProcessesPerCommand: 64, maxFileBytes: 10 * 1024 * 1024, ...limits },
  };
}

/** A temp folder holding `workspaces/` and an `outside/` sibling that nothing may touch. */
export interface Sandbox {
  dir: string;
  workspaces: string;
  outside: string;
  provider: BuiltinProvider;
  tool(name: string): Tool;
  run(name: string, args: JsonObject, who?: Principal, signal?: AbortSignal): Promise<unknown>;
  cleanup(): Promise<void>;
}

export async function createSandbox(overrides: Partial<BuiltinsConfig> = {}, limits: Partial<BuiltinsConfig['limits']> = {}, deps: BuiltinProviderDeps = {}): Promise<Sandbox> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'toolgate-builtins-'));
  const workspaces = path.join(dir, 'workspaces');
  const outside = path.join(dir, 'outside');
  const provider = createBuiltinProvider(builtinsConfig(workspaces, overrides, limits), { stopGraceMs: 200, ...deps });
  const tool = (name: string) => {
    const found = provider.tools().find((t) => t.name === name);
    if (!found) throw new Error(`no tool ${name}`);
    return found;
  };
  return {
    dir,
    workspaces,
    outside,
    provider,
    tool,
    run: async (name, args, who = principal('acme'), signal) => tool(name).handler(args, context(who, signal)),
    cleanup: async () => {
      await provider.closeAll();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Runs a call expected to fail and returns its ToolError type and message. */
export async function failure(promise: Promise<unknown>): Promise<{ errorType: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    const e = error as { errorType?: string; message: string };
    return { errorType: e.errorType ?? 'THROWN', message: e.message };
  }
  throw new Error('expected the call to fail');
}

/** Whether bwrap can run here: it needs the binary and user/mount namespaces (containers often lack one). */
export const bwrapProbe: { usable: boolean; why: string } = (() => {
  const bwrap = findExecutable('bwrap');
  if (!bwrap) return { usable: false, why: 'the bwrap binary is not installed (apt-get install bubblewrap)' };
  const probe = spawnSync(bwrap, ['--unshare-all', '--ro-bind', '/', '/', 'true'], { timeout: 5000 });
  return probe.status === 0 ? { usable: true, why: '' } : { usable: false, why: `bwrap cannot create namespaces here (${probe.stderr?.toString().trim()})` };
})();

/** The sandbox modes this machine can test: none always, bwrap where it works. */
export const testableSandboxes: ('none' | 'bwrap')[] = ['none', ...(bwrapProbe.usable ? ['bwrap' as const] : [])];
