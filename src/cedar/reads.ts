// What a tenant's policies can read of a request (docs/governance.md#what-is-cached): the attribute names they
// access and the paths of `context` they reach. Each decision hands Cedar only that, since Cedar's cost per
// call grows with every value it is given, and the same projection keys the decision cache (engine.ts).
// An attribute or context value no policy reads cannot change a decision: Cedar's entities here have no tags
// and no parents, so a policy observes an entity only through its uid and the attributes it names.
import type { CedarWasm } from './wasm.js';

type Value = CedarWasm.CedarValueJson;

/** What the set reads; `all` where the projection cannot be told (a bare `context`, an unparsed policy). */
export interface PolicyReads {
  /** Attribute names read of any entity or record that is not `context` (`principal.roles` → `roles`). */
  attributes: string[] | 'all';
  /** Paths into `context` (`context.time.hour` → `['time', 'hour']`): each reads its whole value. */
  context: string[][] | 'all';
}

interface Access {
  left: unknown;
  attr: string;
}

const isAccess = (node: unknown): node is Access =>
  node !== null && typeof node === 'object' && typeof (node as { attr?: unknown }).attr === 'string' && 'left' in node;

/** The path into `context` an expression is (`context.a.b` → `['a', 'b']`), or undefined when it is not one. */
function contextPath(expr: unknown): string[] | undefined {
  if (expr === null || typeof expr !== 'object') return undefined;
  if ((expr as { Var?: unknown }).Var === 'context') return [];
  const access = (expr as { '.'?: unknown })['.'];
  if (!isAccess(access)) return undefined;
  const left = contextPath(access.left);
  return left === undefined ? undefined : [...left, access.attr];
}

/** Adds what one policy (Cedar's JSON form) reads to `into`. */
export function addReads(into: PolicyReads, policy: unknown): void {
  const attributes = new Set(into.attributes === 'all' ? [] : into.attributes);
  const paths = new Map<string, string[]>(into.context === 'all' ? [] : into.context.map((path) => [JSON.stringify(path), path]));
  let allContext = into.context === 'all';
  const visit = (node: unknown): void => {
    if (node === null || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    const record = node as Record<string, unknown>;
    if (record.Var === 'context') allContext = true;
    for (const [key, child] of Object.entries(record)) {
      if ((key === '.' || key === 'has') && isAccess(child)) {
        const path = contextPath(child.left);
        if (path !== undefined) {
          // `context.a.b`, `context.a has b`: the value at a.b (or its absence) is all that is read.
          const read = [...path, child.attr];
          paths.set(JSON.stringify(read), read);
          continue;
        }
        attributes.add(child.attr);
      }
      visit(child);
    }
  };
  visit(policy);
  if (into.attributes !== 'all') into.attributes = [...attributes];
  into.context = allContext ? 'all' : [...paths.values()];
}

/** Paths as a tree: a leaf (`true`) is read whole. */
export type ContextMask = true | ReadonlyMap<string, ContextMask>;

type Tree = true | Map<string, Tree>;

export function contextMask(reads: PolicyReads['context']): ContextMask {
  if (reads === 'all') return true;
  const root = new Map<string, Tree>();
  for (const path of reads) {
    if (path.length === 0) return true;
    let level = root;
    for (let index = 0; index < path.length; index += 1) {
      const name = path[index]!;
      const known = level.get(name);
      if (known === true) break;
      if (index === path.length - 1) {
        level.set(name, true);
        break;
      }
      const next = known ?? new Map<string, Tree>();
      level.set(name, next);
      level = next;
    }
  }
  return root;
}

const isRecord = (value: unknown): value is Record<string, Value> =>
  value !== null && typeof value === 'object' && !Array.isArray(value) && !('__entity' in value) && !('__extn' in value);

/** Sets an own property, also one named `__proto__` (an assignment would set the prototype instead). */
function put(out: Record<string, Value>, name: string, value: Value): void {
  if (name === '__proto__') Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true });
  else out[name] = value;
}

/** The part of a context record the mask reads. */
export function projectContext(value: Record<string, Value>, mask: ContextMask): Record<string, Value> {
  if (mask === true) return value;
  const out: Record<string, Value> = {};
  for (const [name, inner] of mask) {
    if (!Object.hasOwn(value, name)) continue;
    const child = value[name]!;
    put(out, name, inner !== true && isRecord(child) ? projectContext(child, inner) : child);
  }
  return out;
}

/** An entity's attributes that some policy reads; the rest never reach Cedar. */
export function projectAttributes(attrs: Record<string, Value>, names: ReadonlySet<string> | 'all'): Record<string, Value> {
  if (names === 'all') return attrs;
  const out: Record<string, Value> = {};
  for (const name of Object.keys(attrs)) if (names.has(name)) put(out, name, attrs[name]!);
  return out;
}
