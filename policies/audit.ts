import Type from 'typebox';
import { auditAround } from '../src/audit/call-audit.js';
import { systemClock } from '../src/pipeline/clock.js';
import { parsePolicyOptions } from '../src/pipeline/options.js';
import type { PolicyDeps, PolicyLayer } from '../src/pipeline/types.js';

export const AuditOptions = Type.Object({}, { additionalProperties: false });

/**
 * One audit event per call, whatever happens inside (denied, limited, failed, pending). Outermost so it
 * sees every outcome; the event is written by src/audit/call-audit.ts, the one writer of call events, which
 * also records the calls refused before the chain. Left out while the audit sink is off.
 */
export function auditPolicy(options: unknown, deps: PolicyDeps): PolicyLayer | undefined {
  parsePolicyOptions('audit', AuditOptions, options);
  if (deps.audit.enabled === false) return undefined;
  return { wrap: auditAround(deps.audit, deps.clock ?? systemClock) };
}
