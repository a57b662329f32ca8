import { hostname } from 'node:os';
import type { AuditEvent } from './types.js';

// pino's info level and its default bindings: audit lines sit beside the logs as lines of their own kind.
const INFO = 30;
const BINDINGS = `"pid":${process.pid},"hostname":${JSON.stringify(hostname())}`;

// An event's canonical JSON, when the audit chain already wrote it to hash the event (src/audit/chain.ts):
// the line reuses that text instead of serialising the event a second time. Weak: gone with the event.
const canonicalTexts = new WeakMap<AuditEvent, string>();

/** Records `text` (the canonical JSON of `event`, `time` included) as the body its line is written from. */
export function rememberCanonicalText(event: AuditEvent, text: string): void {
  canonicalTexts.set(event, text);
}

/**
 * One audit event as a pino-shaped JSON line: `level`, `time` (epoch ms), `pid`, `hostname`, the event's
 * fields, then `msg: "audit"` — so pino-pretty, Loki and friends show it as a titled entry and can select
 * audit lines by `msg`. Both sinks (stdout and file) write this same line. A chained event's line carries
 * its fields (time among them) in canonical key order: the same fields, written from the text its link hashed.
 */
export function auditLine(event: AuditEvent): string {
  const canonical = canonicalTexts.get(event);
  if (canonical !== undefined) return `{"level":${INFO},${BINDINGS},${canonical.slice(1, -1)},"msg":"audit"}\n`;
  const { time, ...fields } = event;
  const body = JSON.stringify(fields);
  return `{"level":${INFO},"time":${time},${BINDINGS},${body.slice(1, -1)},"msg":"audit"}\n`;
}
