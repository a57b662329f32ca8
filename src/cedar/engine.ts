// One tenant's Cedar policies, preparsed once per compile, and the decisions made with them
// (docs/governance.md#cedar-policies): a call's with its arguments, a listing's per principal shape and tool
// (cached), a resource read's and a prompt get's.
import type { CedarConfig } from '../config/types.js';
import { canonicalJson } from '../shared/canonical-json.js';
import type { JsonObject, Tool, ToolMode } from '../call/types.js';
import type { Principal } from '../call/principal.js';
import { MAX_LISTING_DECISIONS } from './limits.js';
import { argumentsRecord, timeRecord, toolEntity, toolUid, userEntity, userUid } from './request.js';
import type { ArgumentType } from './schema.js';
import type { Cedar, CedarWasm } from './wasm.js';

export type CedarAction = 'list' | 'call' | 'read' | 'get';
export type CedarOutcome = 'allow' | 'deny' | 'error';

/** One decision, explained for the audit and the trace (never for the caller). */
export interface CedarDecision {
  readonly allowed: boolean;
  /** The determining policies: the permits that allowed, or the forbids that refused; none when no permit applied. */
  readonly policies: readonly string[];
  /** Set when Cedar could not decide (an evaluation failure): refused, fail closed. */
  readonly error?: string;
}

/** Where a request stands besides its principal and resource. */
export interface RequestFacts {
  readonly mode: ToolMode;
  readonly depth: number;
  /** Epoch ms of the request (the injected clock). */
  readonly now: number;
}

export interface CedarEngineParts {
  cedar: Cedar;
  tenant: string;
  config: CedarConfig;
  schema: CedarWasm.SchemaJson<string>;
  argumentTypes: ReadonlyMap<string, ArgumentType>;
  /** Preparsed set ids: the set as written, and its listing form (listing-set.ts). */
  setId: string;
  listingSetId: string;
  forbids: ReadonlySet<string>;
  policyCount: number;
  /** Told of each decision (the metric by tenant, action and outcome). */
  onDecision?: ((tenant: string, action: CedarAction, outcome: CedarOutcome) => void) | undefined;
}

const ACTIONS: Record<CedarAction, CedarWasm.EntityUidJson> = {
  list: { type: 'Action', id: 'list' },
  call: { type: 'Action', id: 'call' },
  read: { type: 'Action', id: 'read' },
  get: { type: 'Action', id: 'get' },
};

export class CedarEngine {
  /** Listing decisions by principal shape, mode and tool name; starts again when full. */
  private readonly listed = new Map<string, CedarDecision>();
  private readonly principalKeys = new WeakMap<Principal, string>();
  /** How many listing decisions were evaluated (not answered from the cache): the bench and tests read it. */
  listingEvaluations = 0;

  constructor(private readonly parts: CedarEngineParts) {}

  get tenant(): string {
    return this.parts.tenant;
  }

  get schema(): CedarWasm.SchemaJson<string> {
    return this.parts.schema;
  }

  get policyCount(): number {
    return this.parts.policyCount;
  }

  /** What of a principal policies can see (user, roles, exposed claims): principals alike here share a pool. */
  principalKey(principal: Principal): string {
    let key = this.principalKeys.get(principal);
    if (key === undefined) {
      const entity = userEntity(principal, this.parts.config.claims ?? {});
      key = canonicalJson([entity.uid, { ...entity.attrs, roles: [...principal.roles].sort() }]);
      this.principalKeys.set(principal, key);
    }
    return key;
  }

  /** The call with its arguments, after structure validation. */
  decideCall(principal: Principal, tool: Tool, args: JsonObject, facts: RequestFacts): CedarDecision {
    const context = { arguments: argumentsRecord(this.parts.argumentTypes, args), time: timeRecord(facts.now), mode: facts.mode, depth: facts.depth };
    return this.decide('call', this.parts.setId, principal, toolEntity(tool), context);
  }

  /**
   * Whether the tool is listed for the principal: some call of it could be permitted (the listing form of the
   * set allows `call`), and no `forbid` holds it back from `list`. Cached per principal shape, mode and tool.
   */
  listable(principal: Principal, tool: Tool, mode: ToolMode): CedarDecision {
    const key = `${this.principalKey(principal)}\u0000${mode}\u0000${tool.name}`;
    let decision = this.listed.get(key);
    if (decision) return decision;
    this.listingEvaluations += 1;
    const entity = toolEntity(tool);
    decision = this.decide('call', this.parts.listingSetId, principal, entity, { mode }, false);
    if (decision.allowed) {
      const list = this.decide('list', this.parts.setId, principal, entity, { mode }, false);
      // Only a forbid hides: `list` needs no permit of its own.
      if (!list.allowed && (list.policies.length > 0 || list.error)) decision = list;
    }
    this.report('list', decision);
    if (this.listed.size >= MAX_LISTING_DECISIONS) this.listed.clear();
    this.listed.set(key, decision);
    return decision;
  }

  decideResource(principal: Principal, uri: string, facts: RequestFacts): CedarDecision {
    const entity = { uid: { type: 'Resource', id: uri }, attrs: { uri }, parents: [] };
    return this.decide('read', this.parts.setId, principal, entity, { time: timeRecord(facts.now), mode: facts.mode, depth: facts.depth });
  }

  decidePrompt(principal: Principal, name: string, facts: RequestFacts): CedarDecision {
    const entity = { uid: { type: 'Prompt', id: name }, attrs: { name }, parents: [] };
    return this.decide('get', this.parts.setId, principal, entity, { time: timeRecord(facts.now), mode: facts.mode, depth: facts.depth });
  }

  private decide(action: CedarAction, setId: string, principal: Principal, resource: CedarWasm.EntityJson, context: CedarWasm.Context, report = true): CedarDecision {
    const answer = this.parts.cedar.statefulIsAuthorized({
      principal: userUid(principal),
      action: ACTIONS[action],
      resource: resource.uid,
      context,
      preparsedPolicySetId: setId,
      entities: [userEntity(principal, this.parts.config.claims ?? {}), resource],
    });
    let decision: CedarDecision;
    if (answer.type === 'failure') {
      decision = { allowed: false, policies: [], error: answer.errors[0]?.message ?? 'Cedar could not decide' };
    } else {
      const { decision: outcome, diagnostics } = answer.response;
      // A forbid that errored (it read an argument the call did not carry, a value of the wrong type) might
      // have applied: the call is refused, fail closed. An errored permit permits nothing by itself.
      const erroredForbids = diagnostics.errors.map((error) => error.policyId).filter((id) => this.parts.forbids.has(id));
      decision =
        erroredForbids.length > 0
          ? { allowed: false, policies: erroredForbids, error: diagnostics.errors.find((error) => this.parts.forbids.has(error.policyId))!.error.message }
          : { allowed: outcome === 'allow', policies: diagnostics.reason };
    }
    if (report) this.report(action, decision);
    return decision;
  }

  private report(action: CedarAction, decision: CedarDecision): void {
    this.parts.onDecision?.(this.parts.tenant, action, decision.error ? 'error' : decision.allowed ? 'allow' : 'deny');
  }
}
