// The vocabulary of guardrails (docs/governance.md#guardrails): what a detector reports and how a rule
// acts on it. A finding names its kind and where it is; nothing that leaves this folder carries the text.
import type { Census } from './census.js';

/** The detector groups a rule names in `detect` (besides single detector names). */
export const DETECTOR_GROUPS = ['secrets', 'pii', 'injection'] as const;
export type DetectorGroup = (typeof DETECTOR_GROUPS)[number];

// The actions, sides and the per-call event live with the audit line that records them (src/audit).
export { GUARDRAIL_ACTIONS, type Direction, type GuardrailAction, type GuardrailEvent } from '../audit/guardrail-events.js';

/** One match: the detector's kind (e.g. `aws_access_key`) and its span [start, end) in the text scanned. */
export interface Finding {
  readonly kind: string;
  readonly start: number;
  readonly end: number;
  /** Injection signals only: how much this signal adds to the text's injection score (0..1). */
  readonly weight?: number;
}

/** A detector: appends what it finds in `text` to `out`. Linear in the text's length by construction. */
export interface Detector {
  /** Its name in code and docs. */
  readonly name: string;
  readonly group: DetectorGroup | 'custom';
  /** The kinds its findings carry (a rule may name a kind in `detect` to keep only those). */
  readonly kinds: readonly string[];
  /** `census`: the text's, when one was taken (a detector may use it to skip part of its work). */
  find(text: string, out: Finding[], census?: Census): void;
  /**
   * False only when the text cannot hold a finding of this detector, judged from its census (a necessary
   * condition, never a guess): the detector is then not run. Absent: always run.
   */
  readonly gate?: (census: Census) => boolean;
}
