// The default policy chain, outermost first (docs/architecture.md#policy-order). The order is a design decision written once here.
export const DEFAULT_POLICY_ORDER = [
  // Outermost: sees every outcome (denied, limited, pending, failed) so every call leaves exactly one event.
  'audit',
  // Before access: a caller hammering a denied tool still spends budget, and denied calls are counted once.
  'rate-limit',
  // Deny re-check against the live config before anything is bound, stored or executed.
  'access',
  // After access (a denied call binds nothing), before approval (the approver sees and approves the bound call).
  'bind-arguments',
  // The tenant's Cedar policies with the call's (bound) arguments: after access, so Cedar only narrows what the
  // exposure rules admit; after bind-arguments, so policies judge the arguments that will run; before approval,
  // so a refused call never waits for a human (docs/governance.md#cedar-policies).
  'cedar',
  // Before depth/breaker/retry: a pending call is parked without touching upstreams; resumed calls run from here on.
  'approval',
  // Loop protection is cheap and local; checked before spending upstream capacity.
  'max-depth',
  // Outside retry: the breaker judges the final outcome of a call, and an open circuit skips retries entirely.
  'circuit-breaker',
  // Budgets charge a call as it is about to run: after every refusal above (access, approval, rate limit, depth,
  // an open circuit), so a refused call costs nothing; outside retry, so a retried call is charged once.
  'budget',
  // Outside timeout: each attempt gets its own timeout, and retries stop at the call's deadline.
  'retry',
  // Innermost but for guardrails: bounds the executor's work (and the scans around it) and hands it the abort signal.
  'timeout',
  // Around the executor alone, inside timeout: arguments are scanned as they leave (bound values included),
  // results as they arrive, before retry, the breaker or audit see them; the scan's time counts in the call's.
  'guardrails',
] as const;

export type BuiltinPolicyName = (typeof DEFAULT_POLICY_ORDER)[number];

/** Policies a tenant can never switch off: without them calls would be unaudited or bypass deny rules (Cedar's included). */
export const REQUIRED_POLICIES: readonly BuiltinPolicyName[] = ['audit', 'access', 'cedar'];
