import { type ChildProcess, spawn, type StdioOptions } from 'node:child_process';
import { accessSync, constants as fsc, existsSync } from 'node:fs';
import path from 'node:path';

/**
 * How `bash` commands and `grep`'s ripgrep are launched, and what each mode isolates (docs/tools.md#security-what-each-sandbox-mode-guarantees
 * is the user-facing statement of the same).
 *
 * Both modes: cwd in the workspace, HOME there, the environment scrubbed to PATH, HOME, LANG, TERM; each
 * program leads its own process group, so a timeout, stop, abort or shutdown can signal the whole group
 * (and `process-tree` sweeps what left the group).
 *
 * sandbox: bwrap (default where the binary is installed; if it is configured but missing, bash and grep
 * fail closed instead of running bare)
 *   - A fresh mount namespace holding only: the workspace (read-write for bash, read-only for grep, at its
 *     real path), the configured read-only roots, /usr, /bin, /sbin, /lib, /lib64 and a minimal /etc
 *     (read-only), a fresh /tmp (tmpfs), /dev (minimal) and /proc of a new PID namespace. Other tenants'
 *     workspaces, toolgate's files and /proc/<toolgate pid>/environ are not visible.
 *   - --unshare-all: no network (only a private loopback), new PID/IPC/UTS/cgroup/user namespaces. The PID
 *     namespace ends when the program does, which kills everything it left behind (`cmd &`, `setsid`).
 *     --die-with-parent and --new-session: the sandbox dies with its launcher and cannot push keystrokes
 *     into toolgate's terminal (TIOCSTI).
 *   - NOT given: CPU/memory/disk quotas (use cgroups or container limits), a seccomp filter, protection
 *     against kernel exploits. Same-tenant processes share the workspace.
 *
 * sandbox: none (where bwrap is not installed, or chosen): NOT isolated. A program runs as toolgate's OS
 * user and can read and write anything that user can. The built-ins refuse `bash` here unless
 * `allowUnsandboxedShell` is set; grep still runs (rg, never a shell).
 */
export type SandboxMode = 'none' | 'bwrap';

export interface LaunchSpec {
  file: string;
  args: string[];
}

/** One program to run for a caller: what, where, and which of its workspace it may see. */
export interface SandboxedProgram {
  /** argv[0] is an absolute path. */
  argv: readonly string[];
  /** Real path of the working directory (already checked to be inside the allowed roots). */
  cwd: string;
  /**
   * Where the process starts on the host when that must not be looked up by name again: `/proc/self/fd/N`
   * of a held folder, which the child's chdir resolves through the descriptor (a parent swapped for a
   * symlink meanwhile changes nothing). Default `cwd`.
   */
  startIn?: string;
  workspace: { root: string; readOnlyRoots: readonly string[] };
  /** False binds the workspace read-only (grep); true read-write (bash). */
  writable: boolean;
}

export interface CommandLauncher {
  readonly mode: SandboxMode;
  /** Undefined when the launcher can run programs; otherwise why not (bwrap configured but absent). */
  readonly unavailable: string | undefined;
  launch(program: SandboxedProgram): LaunchSpec;
}

const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64'];
// Enough of /etc for the dynamic linker, user/group lookups, time zone and Debian's alternatives.
const ETC_FILES = ['/etc/ld.so.cache', '/etc/ld.so.conf', '/etc/ld.so.conf.d', '/etc/alternatives', '/etc/passwd', '/etc/group', '/etc/nsswitch.conf', '/etc/localtime', '/etc/ssl/certs'];

export function findExecutable(name: string, searchPath = process.env.PATH ?? ''): string | undefined {
  for (const dir of searchPath.split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, fsc.X_OK);
      return candidate;
    } catch {
      // keep looking
    }
  }
  return undefined;
}

export function defaultShell(): string {
  return existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh';
}

/** The sandbox a config that names none gets: bwrap where its binary is installed, otherwise none. */
export function defaultSandboxMode(searchPath?: string): SandboxMode {
  return findExecutable('bwrap', searchPath) ? 'bwrap' : 'none';
}

export function createLauncher(mode: SandboxMode, options: { bwrapPath?: string; searchPath?: string } = {}): CommandLauncher {
  if (mode === 'none') {
    return { mode, unavailable: undefined, launch: ({ argv }) => ({ file: argv[0]!, args: argv.slice(1) }) };
  }
  const bwrap = options.bwrapPath ?? findExecutable('bwrap', options.searchPath);
  return {
    mode,
    unavailable: bwrap ? undefined : 'sandbox "bwrap" is configured but the bwrap binary was not found; bash and grep are disabled',
    launch({ argv, cwd, workspace, writable }) {
      if (!bwrap) throw new Error('bwrap not available');
      // --unshare-all includes a PID namespace: when the program exits, its namespace's init exits and the
      // kernel kills everything left in it (`cmd &`, `setsid cmd`); --die-with-parent does the same when
      // toolgate kills the bwrap process.
      const args = ['--unshare-all', '--die-with-parent', '--new-session'];
      for (const dir of SYSTEM_DIRS) args.push('--ro-bind-try', dir, dir);
      for (const file of ETC_FILES) args.push('--ro-bind-try', file, file);
      args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp');
      // Bound after the /tmp tmpfs so a workspace under /tmp stays visible.
      for (const root of workspace.readOnlyRoots) args.push('--ro-bind-try', root, root);
      args.push(writable ? '--bind' : '--ro-bind', workspace.root, workspace.root);
      // A program outside the system folders (e.g. rg in /opt) is made visible, read-only, at its own path.
      const program = argv[0]!;
      if (!SYSTEM_DIRS.some((dir) => program.startsWith(`${dir}/`))) args.push('--ro-bind', program, program);
      args.push('--chdir', cwd, '--', ...argv);
      return { file: bwrap, args };
    },
  };
}

/** The only variables a command sees. HOME is the workspace so tools write their dotfiles there. */
function scrubbedEnv(home: string): Record<string, string> {
  return {
    PATH: process.env.PATH || '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    HOME: home,
    LANG: process.env.LANG || 'C.UTF-8',
    TERM: 'dumb',
  };
}

/**
 * Starts a program through the launcher as the leader of its own process group (so the whole group can
 * be signalled) with the scrubbed environment. Throws when the launcher cannot run programs.
 */
export function spawnSandboxed(launcher: CommandLauncher, program: SandboxedProgram, stdio: StdioOptions, extraEnv: Record<string, string> = {}): ChildProcess {
  const spec = launcher.launch(program);
  return spawn(spec.file, spec.args, { cwd: program.startIn ?? program.cwd, env: { ...scrubbedEnv(program.workspace.root), ...extraEnv }, detached: true, stdio });
}
