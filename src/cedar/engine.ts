// One tenant's Cedar policies, preparsed once per compile, and the decisions made with them
// (docs/governance.md#cedar-policies): a call's with its arguments, a listing's per principal shape and tool
// (cached), a resource read's and a prompt get's.
import type { CedarConfig } from '../config/types.js';
import type { JsonObject, Tool, ToolMode } from '../call/types.js';
import type { Principal } from '../call/principal.js';
import { MAX_CALL_DECISIONS, MAX_DECISION_KEY_CHARS, MAX_LISTING_DECISIONS } from './limits.js';
import { contextMask, projectAttributes, projectContext, type ContextMask, type PolicyReads } from './reads.js';
import { argumentsRecord, timeRecord, toolEntity, userEntity } from './request.js';
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
  /** What the set reads of a request (reads.ts): only that is handed to Cedar, and it keys the decision cache. */
  reads: PolicyReads;
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

/** An entity as Cedar gets it (only the attributes policies read), and a key for what it is in full. */
interface Subject {
  readonly key: string;
  readonly entity: CedarWasm.EntityJson;
}

export class CedarEngine {
  /** Listing decisions by principal shape, mode and tool name; starts again when full. */
  private readonly listed = new Map<string, CedarDecision>();
  /**
   * Decisions by action, principal shape, resource and the context as projected (reads.ts): a decision is a
   * function of these alone. Starts again when full; a key past its cap is not kept (a long argument).
   */
  private readonly decided = new Map<string, CedarDecision>();
  private readonly principals = new WeakMap<Principal, Subject>();
  private readonly tools = new WeakMap<Tool, Subject>();
  private readonly attributes: ReadonlySet<string> | 'all';
  private readonly mask: ContextMask;
  /** How many listing decisions were evaluated (not answered from the cache): the bench and tests read it. */
  listingEvaluations = 0;
  /** How many decisions Cedar evaluated, listing's included (the others were answered from a cache). */
  evaluations = 0;

  constructor(private readonly parts: CedarEngineParts) {
    this.attributes = parts.reads.attributes === 'all' ? 'all' : new Set(parts.reads.attributes);
    this.mask = contextMask(parts.reads.context);
  }

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
    return this.principal(principal).key;
  }

  /** The call with its arguments, after structure validation. */
  decideCall(principal: Principal, tool: Tool, args: JsonObject, facts: RequestFacts): CedarDecision {
    const context = { arguments: argumentsRecord(this.parts.argumentTypes, args), time: timeRecord(facts.now), mode: facts.mode, depth: facts.depth };
    return this.decide('call', this.parts.setId, principal, this.tool(tool), context);
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
    const subject = this.tool(tool);
    decision = this.decide('call', this.parts.listingSetId, principal, subject, { mode }, false);
    if (decision.allowed) {
      const list = this.decide('list', this.parts.setId, principal, subject, { mode }, false);
      // Only a forbid hides: `list` needs no permit of its own.
      if (!list.allowed && (list.policies.length > 0 || list.error)) decision = list;
    }
    this.report('list', decision);
    if (this.listed.size >= MAX_LISTING_DECISIONS) this.listed.clear();
    this.listed.set(key, decision);
    return decision;
  }

  decideResource(principal: Principal, uri: string, facts: RequestFacts): CedarDecision {
    const resource = this.subject({ uid: { type: 'Resource', id: uri }, attrs: { uri }, parents: [] });
    return this.decide('read', this.parts.setId, principal, resource, { time: timeRecord(facts.now), mode: facts.mode, depth: facts.depth });
  }

  decidePrompt(principal: Principal, name: string, facts: RequestFacts): CedarDecision {
    const prompt = this.subject({ uid: { type: 'Prompt', id: name }, attrs: { name }, parents: [] });
    return this.decide('get', this.parts.setId, principal, prompt, { time: timeRecord(facts.now), mode: facts.mode, depth: facts.depth });
  }

  /** The principal's entity, built once per Principal object (one per verified credential and request). */
  private principal(principal: Principal): Subject {
    let subject = this.principals.get(principal);
    if (subject === undefined) {
      const entity = userEntity(principal, this.parts.config.claims ?? {});
      // Roles sorted: principals whose roles differ only in order share a shape (and a pool, src/snapshot/pool-cache.ts).
      // JSON.stringify, not canonical JSON: the entity is built in one key order (request.ts), and these keys are
      // only compared within this process.
      const key = JSON.stringify([entity.uid, { ...entity.attrs, roles: [...principal.roles].sort() }]);
      subject = { key, entity: { ...entity, attrs: projectAttributes(entity.attrs, this.attributes) } };
      this.principals.set(principal, subject);
    }
    return subject;
  }

  private tool(tool: Tool): Subject {
    let subject = this.tools.get(tool);
    if (subject === undefined) {
      subject = this.subject(toolEntity(tool));
      this.tools.set(tool, subject);
    }
    return subject;
  }

  private subject(entity: CedarWasm.EntityJson): Subject {
    return { key: JSON.stringify(entity), entity: { ...entity, attrs: projectAttributes(entity.attrs, this.attributes) } };
  }

  /** One decision; `remember` false for listing's, which listable() caches by its own key. */
  private decide(action: CedarAction, setId: string, principal: Principal, resource: Subject, context: Record<string, CedarWasm.CedarValueJson>, remember = true): CedarDecision {
    const user = this.principal(principal);
    const projected = projectContext(context, this.mask);
    let key: string | undefined;
    if (remember) {
      // Another key order of the same context (a whole argument record in the caller's order) is a miss, never a wrong answer.
      key = `${action}\u0000${user.key}\u0000${resource.key}\u0000${JSON.stringify(projected)}`;
      if (key.length > MAX_DECISION_KEY_CHARS) key = undefined;
      const known = key === undefined ? undefined : this.decided.get(key);
      if (known) {
        this.report(action, known);
        return known;
      }
    }
    this.evaluations += 1;
    const answer = this.parts.cedar.statefulIsAuthorized({
      principal: user.entity.uid,
      action: ACTIONS[action],
      resource: resource.entity.uid,
      context: projected,
      preparsedPolicySetId: setId,
      entities: [user.entity, resource.entity],
    });
    let decision: CedarDecision;
    if (answer.type === 'failure') {
      decision = { allowed: false, policies: [], error: answer.errors[0]?.message ?? 'Cedar could not decide' };
    } else {
      const { decision: outcome, diagnostics } = answer.response;
      // A forbid that errored (it read an argument the call did not carry, a value of the wrong type) might
      // have applied: the call is refused, fail closed. An errored permit permits nothing by itself.
      const erroredForbids: string[] = [];
      let message = '';
      for (const { policyId, error } of diagnostics.errors) {
        if (!this.parts.forbids.has(policyId)) continue;
        if (erroredForbids.length === 0) message = error.message;
        erroredForbids.push(policyId);
      }
      decision = erroredForbids.length > 0 ? { allowed: false, policies: erroredForbids, error: message } : { allowed: outcome === 'allow', policies: diagnostics.reason };
    }
    if (key !== undefined) {
      if (this.decided.size >= MAX_CALL_DECISIONS) this.decided.clear();
      this.decided.set(key, decision);
    }
    if (remember) this.report(action, decision);
    return decision;
  }

  private report(action: CedarAction, decision: CedarDecision): void {
    this.parts.onDecision?.(this.parts.tenant, action, decision.error ? 'error' : decision.allowed ? 'allow' : 'deny');
  }
}
