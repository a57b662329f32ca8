import { hostname } from 'node:os';
import type { AuditEvent } from './types.js';

// pino's info level and its default bindings: audit lines sit beside the logs as lines of their own kind.
const INFO = 30;
const BINDINGS = `"pid":${process.pid},"hostname":${JSON.stringify(hostname())}`;

/**
 * One audit event as a pino-shaped JSON line: `level`, `time` (epoch ms), `pid`, `hostname`, the event's
 * fields, then `msg: "audit"` — so pino-pretty, Loki and friends show it as a titled entry and can select
 * audit lines by `msg`. Both sinks (stdout and file) write this same line.
 */
export function auditLine(event: AuditEvent): string {
  const { time, ...fields } = event;
  const body = JSON.stringify(fields);
  return `{"level":${INFO},"time":${time},${BINDINGS},${body.slice(1, -1)},"msg":"audit"}\n`;
}
