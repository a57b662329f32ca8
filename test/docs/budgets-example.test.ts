import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { compileBudgets } from '../../src/budgets/compile.js';
import { docBlock } from '../helpers/doc-blocks.js';
import { testConfig } from '../helpers/build.js';

// The budgets example of docs/governance.md#budgets is a configuration toolgate accepts as written.
describe('the budgets example in docs/governance.md', () => {
  it('validates and compiles, with the costs it documents', () => {
    const { tenants } = parse(docBlock('docs/governance.md', 'budgets-config', 'yaml')) as { tenants: { acme: Record<string, unknown> } };
    const config = testConfig({ tenants: { acme: { ...tenants.acme, toolsets: {} } } });
    const acme = config.tenants.acme!;
    const compiled = compileBudgets(acme.budgets, acme.toolCosts, acme.toolsets);
    expect(compiled.budgets.map((budget) => budget.id)).toContain('nightly-reports');
    expect(compiled.costOf('web_search')).toEqual({ cost: 5 });
    expect(compiled.costOf('summarise')).toEqual({ cost: 10, max: 200 });
    expect(compiled.costOf('anything_else')).toEqual({ cost: 1 });
  });
});
