import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** Signals a detached child's whole process group; falls back to the leader when the group is gone. */
export function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      // already exited
    }
  }
}

interface ProcStat {
  pid: number;
  ppid: number;
  pgrp: number;
  /** Start time in clock ticks since boot: tells a pid apart from a later process that reuses it. */
  start: number;
  zombie: boolean;
}

// /proc/<pid>/stat is "pid (comm) state ppid pgrp session … starttime(22nd) …"; comm may hold spaces and ')'.
function readStat(pid: number): ProcStat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { pid, ppid: Number(fields[1]), pgrp: Number(fields[2]), start: Number(fields[19]), zombie: fields[0] === 'Z' || fields[0] === 'X' };
  } catch {
    return undefined; // gone meanwhile
  }
}

function scanProcesses(): ProcStat[] {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return []; // no procfs: only the process group is swept
  }
  const out: ProcStat[] = [];
  for (const name of names) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid <= 0) continue;
    const stat = readStat(pid);
    if (stat && !stat.zombie) out.push(stat);
  }
  return out;
}

function environHas(pid: number, marker: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(marker);
  } catch {
    return false;
  }
}

/** The processes of one command, found on every tick and swept at its end. */
export interface TrackedCommand {
  /** SIGKILLs every process of the command still alive (group, recorded descendants, marked escapees). */
  killAll(): void;
  /** Stops watching (after killAll, or when the command's processes may live on). */
  untrack(): void;
}

export interface ProcessSweeper {
  /**
   * Watches a detached child (its own process group) whose environment holds `marker` (`NAME=value`).
   * `onOverLimit` runs once when the command holds more than the sweeper's maximum of live processes.
   */
  track(child: ChildProcess, marker: string, onOverLimit: () => void): TrackedCommand;
}

interface Tracked {
  child: ChildProcess;
  leader: number;
  leaderStart: number;
  marker: string;
  /** pid → start of every process seen as the command's, so a descendant that left the group is still found. */
  seen: Map<number, number>;
  /** pid → start of processes checked and found not to carry the marker. */
  foreign: Map<number, number>;
  onOverLimit: (() => void) | undefined;
}

/**
 * Finds a command's processes by walking /proc: its process group, every descendant of a process already
 * known to be the command's (recorded on each tick, so one that called setsid() and lost its parent is
 * still known), and any process started since the command whose environment carries the command's marker
 * (catches `setsid cmd &` whose parent exited before a tick). A process that clears its environment, leaves
 * the group and is orphaned between two ticks escapes this sweep; under bwrap the PID namespace catches
 * even that. The same walk enforces the per-command process cap, on a 200 ms tick.
 */
export function createProcessSweeper(options: { maxProcesses: number; intervalMs?: number }): ProcessSweeper {
  const intervalMs = options.intervalMs ?? 200;
  const tracked = new Set<Tracked>();
  let timer: NodeJS.Timeout | undefined;

  // A process started since the command whose environment carries its marker; a miss is remembered.
  const marked = (t: Tracked, p: ProcStat): boolean => {
    if (t.foreign.get(p.pid) === p.start) return false;
    if (environHas(p.pid, t.marker)) return true;
    t.foreign.set(p.pid, p.start);
    return false;
  };

  const membersOf = (t: Tracked, all: readonly ProcStat[]): ProcStat[] => {
    const leaderAlive = t.child.exitCode === null && t.child.signalCode === null;
    const live = new Set(all.map((p) => p.pid));
    for (const map of [t.seen, t.foreign]) for (const pid of map.keys()) if (!live.has(pid)) map.delete(pid);
    const members = new Map<number, ProcStat>();
    for (const p of all) {
      if (p.start < t.leaderStart) continue; // older than the command: never one of its processes
      if ((leaderAlive && p.pid === t.leader) || p.pgrp === t.leader || t.seen.get(p.pid) === p.start || marked(t, p)) members.set(p.pid, p);
    }
    // Descendants of known members, to a fixed point (a child may be listed before its parent).
    for (let grew = true; grew; ) {
      grew = false;
      for (const p of all) {
        if (!members.has(p.pid) && p.start >= t.leaderStart && members.has(p.ppid)) {
          members.set(p.pid, p);
          grew = true;
        }
      }
    }
    for (const p of members.values()) t.seen.set(p.pid, p.start);
    return [...members.values()];
  };

  const tick = () => {
    const all = scanProcesses();
    for (const t of tracked) {
      const members = membersOf(t, all);
      if (members.length > options.maxProcesses && t.onOverLimit) {
        const notify = t.onOverLimit;
        t.onOverLimit = undefined;
        notify();
      }
    }
  };

  const untrack = (t: Tracked) => {
    tracked.delete(t);
    if (tracked.size === 0 && timer) {
      clearInterval(timer);
      timer = undefined;
    }
  };

  return {
    track(child, marker, onOverLimit) {
      const leader = child.pid ?? -1;
      const t: Tracked = { child, leader, leaderStart: readStat(leader)?.start ?? 0, marker, seen: new Map(), foreign: new Map(), onOverLimit };
      if (leader > 0) {
        tracked.add(t);
        timer ??= setInterval(tick, intervalMs);
        timer.unref();
      }
      return {
        killAll() {
          if (leader <= 0) return;
          // A few rounds: a process may have forked between the walk and its SIGKILL.
          for (let round = 0; round < 5; round += 1) {
            try {
              process.kill(-leader, 'SIGKILL');
            } catch {
              // no group left
            }
            const members = membersOf(t, scanProcesses());
            if (members.length === 0) return;
            for (const p of members) {
              // Re-checked right before the signal so a pid reused by an unrelated process is left alone.
              if (readStat(p.pid)?.start !== p.start) continue;
              try {
                process.kill(p.pid, 'SIGKILL');
              } catch {
                // gone
              }
            }
          }
        },
        untrack: () => untrack(t),
      };
    },
  };
}
