// The listing's view of a policy set (docs/governance.md#cedar-listing). At listing there are no arguments,
// no request time and no depth yet, so every condition reading them is unknown; the rule keeps a tool listed
// whenever some call of it could be permitted:
// - a `permit` keeps its scope and its conditions, except that a top-level conjunct (of a `when`, or a whole
//   `unless`) reading anything of `context` but `context.mode` is dropped: it might hold;
// - a `forbid` whose conditions read such context is left out: it might not apply.
// What remains is decided exactly, against the preparsed set, like a call.
import type { CedarWasm } from './wasm.js';

type PolicyJson = CedarWasm.PolicyJson;
type Expr = CedarWasm.Expr;

/** Whether `node` reads `context` other than through `context.mode`. */
export function readsUnknownContext(node: unknown): boolean {
  if (node === null || typeof node !== 'object') return false;
  if (Array.isArray(node)) return node.some(readsUnknownContext);
  const record = node as Record<string, unknown>;
  const access = record['.'] as { left?: { Var?: string }; attr?: string } | undefined;
  if (access?.left?.Var === 'context') return access.attr !== 'mode';
  if (record.Var === 'context') return true;
  return Object.values(record).some(readsUnknownContext);
}

function conjuncts(expr: Expr): Expr[] {
  const and = (expr as { '&&'?: { left: Expr; right: Expr } })['&&'];
  return and ? [...conjuncts(and.left), ...conjuncts(and.right)] : [expr];
}

const conjunction = (parts: Expr[]): Expr => parts.reduce((left, right) => ({ '&&': { left, right } }) as Expr);

/** The listing form of one policy, or undefined when it takes no part in listing. */
export function listingPolicy(policy: PolicyJson): PolicyJson | undefined {
  if (!readsUnknownContext(policy.conditions)) return policy;
  if (policy.effect === 'forbid') return undefined;
  const conditions: PolicyJson['conditions'] = [];
  for (const clause of policy.conditions) {
    if (clause.kind === 'unless') {
      if (!readsUnknownContext(clause.body)) conditions.push(clause);
      continue;
    }
    const known = conjuncts(clause.body).filter((part) => !readsUnknownContext(part));
    if (known.length > 0) conditions.push({ kind: 'when', body: conjunction(known) });
  }
  return { ...policy, conditions };
}
