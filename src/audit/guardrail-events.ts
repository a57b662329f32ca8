// What the guardrails did on a call (docs/governance.md#guardrails), as its audit line records it, carried
// on the call's ToolResult under a symbol (spreads copy it, JSON never shows it): kinds, actions and
// counts, never the matched text. Here rather than in src/guardrails: the audit reads it without
// depending on the scanner.

/** What a rule does with what its detectors found. */
export const GUARDRAIL_ACTIONS = ['mask', 'hash', 'block', 'flag'] as const;
export type GuardrailAction = (typeof GUARDRAIL_ACTIONS)[number];

/** Which side of the call a rule reads: the arguments before the executor, the result after it. */
export type Direction = 'arguments' | 'result';

/** What one rule did on one call, as the audit line, the metric and the console record it. */
export interface GuardrailEvent {
  readonly direction: Direction;
  /** The kind found (`aws_access_key`, `email`, `injection`, a custom detector's name, `field`), or `oversize` / `timeout`. */
  readonly detector: string;
  /** A rule's action, or what the size and time bounds did: `truncate` (cut to the bound) or `pass` (let through unscanned). */
  readonly action: GuardrailAction | 'truncate' | 'pass';
  readonly count: number;
  /** Injection only: the highest score seen. */
  readonly score?: number;
}

const GUARDRAILS = Symbol('toolgate.guardrails');

type Carrier = { [GUARDRAILS]?: readonly GuardrailEvent[] };

export function attachGuardrailEvents<T extends object>(result: T, events: readonly GuardrailEvent[]): T {
  if (events.length > 0) (result as T & Carrier)[GUARDRAILS] = [...((result as T & Carrier)[GUARDRAILS] ?? []), ...events];
  return result;
}

export function guardrailEventsOf(result: object): readonly GuardrailEvent[] | undefined {
  return (result as Carrier)[GUARDRAILS];
}
