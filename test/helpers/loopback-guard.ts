// Test guard: records every outgoing TCP connect and lets a test fail if any target is not a
// loopback address (a rule of this repository's tests: none opens a connection to a non-loopback address). The
// connect is refused *before* it happens, so a mistake cannot reach the network.
import net from 'node:net';

const LOOPBACK = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|::1|::ffff:127\.\d{1,3}\.\d{1,3}\.\d{1,3}|localhost)$/i;

export interface LoopbackGuard {
  /** Every host dialled since install. */
  readonly dialled: string[];
  /** Hosts that were refused because they are not loopback. */
  readonly violations: string[];
  uninstall(): void;
}

function hostOf(args: unknown[]): string | undefined {
  const first = Array.isArray(args[0]) ? args[0][0] : args[0];
  if (first !== null && typeof first === 'object') {
    const options = first as { host?: string; path?: string };
    if (options.path) return undefined; // a Unix socket, not the network
    return options.host ?? 'localhost';
  }
  if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    return typeof args[1] === 'string' ? args[1] : 'localhost';
  }
  return undefined;
}

export function installLoopbackGuard(): LoopbackGuard {
  const original = net.Socket.prototype.connect;
  const dialled: string[] = [];
  const violations: string[] = [];
  net.Socket.prototype.connect = function guardedConnect(this: net.Socket, ...args: unknown[]) {
    const host = hostOf(args);
    if (host !== undefined) {
      dialled.push(host);
      if (!LOOPBACK.test(host.replace(/^\[|\]$/g, ''))) {
        violations.push(host);
        throw new Error(`loopback guard: test tried to dial non-loopback host ${host}`);
      }
    }
    return (original as (...a: unknown[]) => net.Socket).apply(this, args);
  } as typeof original;
  return {
    dialled,
    violations,
    uninstall: () => {
      net.Socket.prototype.connect = original;
    },
  };
}
