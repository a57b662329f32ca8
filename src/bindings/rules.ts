// A tenant's binding rules (docs/security-model.md#bound-arguments), compiled once per tenant and config
// snapshot: the registry's view reads which keys they bind (so the model never sees them), the
// bind-arguments policy reads the templates it expands. One reading of "which rules apply to this tool".
import { compileOptionGlobs, type NameMatcher } from '../patterns/name-globs.js';
import type { JsonObject, Tool } from '../call/types.js';

export interface BindingRules {
  /** The tool's own `bindings`, then each rule whose glob matches its name (later wins per top-level key). */
  templateFor(tool: Tool): JsonObject;
  /** The top-level keys `templateFor(tool)` binds. */
  boundKeys(tool: Tool): readonly string[];
  /** Whether anything is bound for the tool. */
  appliesTo(tool: Tool): boolean;
}

const NONE: JsonObject = Object.freeze({}) as JsonObject;

/** `bindings`: tool name or glob → templates, as `mergeBindings` (src/bindings/merge.ts) gives them. */
export function compileBindingRules(bindings: Record<string, JsonObject>): BindingRules {
  // Most tenants bind nothing: their rules depend on the tool alone, so they share one set (and the chain can
  // share their bind-arguments layer, src/pipeline/shared-layers.ts).
  if (Object.keys(bindings).length === 0) return (noRules ??= rulesOf([]));
  return rulesOf(
    Object.entries(bindings).map(([glob, template]) => ({
      matches: compileOptionGlobs(`bindings[${JSON.stringify(glob)}]`, [glob]),
      template: template ?? NONE,
    })),
  );
}

let noRules: BindingRules | undefined;

/** Whether `rules` are the ones every tenant that binds nothing shares. */
export const bindsNothing = (rules: BindingRules): boolean => rules === noRules;

function rulesOf(rules: ReadonlyArray<{ matches: NameMatcher; template: JsonObject }>): BindingRules {
  // Tools live as long as their snapshot, and so do these rules: each tool's template is worked out once. A
  // tool nothing binds gets the shared empty template and no entry (most tenants bind nothing: no map at all).
  let templates: WeakMap<Tool, JsonObject> | undefined;
  const templateFor = (tool: Tool): JsonObject => {
    if (rules.length === 0 && !tool.bindings) return NONE;
    let template = templates?.get(tool);
    if (template === undefined) {
      template = { ...(tool.bindings ?? {}) };
      for (const rule of rules) if (rule.matches(tool.name)) template = { ...template, ...rule.template };
      if (Object.keys(template).length === 0) template = NONE;
      (templates ??= new WeakMap()).set(tool, template);
    }
    return template;
  };
  return {
    templateFor,
    boundKeys: (tool) => Object.keys(templateFor(tool)),
    appliesTo: (tool) => Object.keys(templateFor(tool)).length > 0,
  };
}
