import { describe, expect, it } from 'vitest';
import { bindArgumentsPolicy } from '../../../policies/bind-arguments.js';
import { compileBindingRules } from '../../../src/bindings/rules.js';
import { createTenantView } from '../../../src/registry/tenant-view.js';
import { asPolicy, makeCall, makeCtx, makeDeps, makeTool, recordingTerminal } from '../../helpers/policy-fixtures.js';
import { testConfig } from '../../helpers/build.js';

const search = makeTool({ name: 'knowledge_search', bindings: { filter: { tenant: '${principal.tenant}' } } });

describe('binding rules', () => {
  it("apply the tool's own templates, then each matching glob's in order (later wins per top-level key)", () => {
    const rules = compileBindingRules({ 'knowledge_*': { topK: 3, filter: { tenant: 'glob' } }, knowledge_search: { topK: 5 } });
    expect(rules.templateFor(search)).toEqual({ filter: { tenant: 'glob' }, topK: 5 });
    expect(rules.boundKeys(search)).toEqual(['filter', 'topK']);
    expect(rules.appliesTo(makeTool({ name: 'other' }))).toBe(false);
    expect(rules.appliesTo(makeTool({ name: 'other', bindings: { a: 1 } }))).toBe(true);
  });

  it('are compiled once per tenant: the view hides exactly the keys the policy binds', async () => {
    const tenant = testConfig({ tenants: { acme: { bindings: { 'knowledge_*': { department: '${claims.department}' } } } } }).tenants.acme!;
    const view = createTenantView('acme', tenant);
    expect(view.boundKeys(search)).toEqual(['filter', 'department']);
    // The chain hands the view's rules to the policy (src/snapshot/snapshot.ts): options without bindings still bind.
    const terminal = recordingTerminal();
    await asPolicy(bindArgumentsPolicy(undefined, { ...makeDeps(), bindings: view.bindings }))(makeCall(search, { query: 'q' }), makeCtx(), terminal);
    expect(Object.keys(terminal.calls[0]!.arguments).sort()).toEqual(['department', 'filter', 'query']);
  });
});
