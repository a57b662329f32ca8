import { accessSync, constants as fsc, existsSync } from 'node:fs';
import path from 'node:path';

/**
 * How `bash` commands are launched, and what each mode isolates.
 *
 * sandbox: none (default)
 *   - cwd is the caller's workspace; HOME points at it; the environment is scrubbed to PATH, HOME, LANG,
 *     TERM (none of toolgate's variables, tokens or secrets are inherited).
 *   - Each command runs in its own process group, so a timeout, stop, abort or shutdown kills the whole
 *     tree (a command that calls setsid() itself can escape the group).
 *   - Output, time and the number of background processes are bounded.
 *   - NOT isolated: the command runs as toolgate's OS user. It can read (and write) anything that user can:
 *     other tenants' workspaces, toolgate's config file, /proc/<toolgate pid>/environ, the network.
 *     Path checks apply to the file tools only, not to what a shell command does. Use this mode only for
 *     trusted tenants, or run toolgate as a dedicated unprivileged user in a container.
 *
 * sandbox: bwrap (bubblewrap must be installed; if it is missing, bash fails closed instead of running bare)
 *   - A fresh mount namespace holding only: the workspace (read-write, at its real path), the configured
 *     read-only roots, /usr, /bin, /sbin, /lib, /lib64 and a minimal /etc (read-only), a fresh /tmp (tmpfs),
 *     /dev (minimal) and /proc of a new PID namespace. Other tenants' workspaces, toolgate's files and
 *     the host's /home, /root, /var are not visible.
 *   - --unshare-all: no network (only a private loopback), new PID/IPC/UTS/cgroup/user namespaces, so the
 *     command cannot see or signal host processes. --die-with-parent and --new-session: the sandbox dies
 *     with its launcher and cannot push keystrokes into toolgate's terminal (TIOCSTI).
 *   - NOT given: CPU/memory/disk quotas (use cgroups or container limits), a seccomp filter, protection
 *     against kernel exploits. Same-tenant processes share the workspace and can see each other's files.
 */
export type SandboxMode = 'none' | 'bwrap';

export interface LaunchSpec {
  file: string;
  args: string[];
}

export interface CommandLauncher {
  readonly mode: SandboxMode;
  /** Undefined when the launcher can run commands; otherwise why not (bwrap configured but absent). */
  readonly unavailable: string | undefined;
  launch(command: string, cwd: string, workspace: { root: string; readOnlyRoots: readonly string[] }): LaunchSpec;
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

export function createLauncher(mode: SandboxMode, options: { bwrapPath?: string; searchPath?: string; shell?: string } = {}): CommandLauncher {
  const shell = options.shell ?? defaultShell();
  if (mode === 'none') {
    return { mode, unavailable: undefined, launch: (command) => ({ file: shell, args: ['-c', command] }) };
  }
  const bwrap = options.bwrapPath ?? findExecutable('bwrap', options.searchPath);
  return {
    mode,
    unavailable: bwrap ? undefined : 'sandbox "bwrap" is configured but the bwrap binary was not found; bash is disabled',
    launch(command, cwd, workspace) {
      if (!bwrap) throw new Error('bwrap not available');
      const args = ['--unshare-all', '--die-with-parent', '--new-session'];
      for (const dir of SYSTEM_DIRS) args.push('--ro-bind-try', dir, dir);
      for (const file of ETC_FILES) args.push('--ro-bind-try', file, file);
      args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp');
      // Bound after the /tmp tmpfs so a workspace under /tmp stays visible.
      for (const root of workspace.readOnlyRoots) args.push('--ro-bind-try', root, root);
      args.push('--bind', workspace.root, workspace.root, '--chdir', cwd, '--', shell, '-c', command);
      return { file: bwrap, args };
    },
  };
}

/** The only variables a command sees. HOME is the workspace so tools write their dotfiles there. */
export function scrubbedEnv(home: string): Record<string, string> {
  return {
    PATH: process.env.PATH || '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    HOME: home,
    LANG: process.env.LANG || 'C.UTF-8',
    TERM: 'dumb',
  };
}
