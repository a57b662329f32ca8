import { describe, expect, it } from 'vitest';
import { addReads, contextMask, projectAttributes, projectContext, type PolicyReads } from '../../../src/cedar/reads.js';
import { loadCedar } from '../../../src/cedar/wasm.js';

async function readsOf(...texts: string[]): Promise<PolicyReads> {
  const cedar = await loadCedar();
  const reads: PolicyReads = { attributes: [], context: [] };
  for (const text of texts) {
    const json = cedar.policyToJson(text);
    if (json.type !== 'success') throw new Error(`not a policy: ${text}`);
    addReads(reads, json.json);
  }
  return reads;
}

describe('what policies read of a request', () => {
  it('collects attribute names and context paths, each path once', async () => {
    const reads = await readsOf(
      'permit(principal, action, resource) when { context.arguments.amount > 3 && principal.claims.team == "x" && resource.readOnly };',
      'forbid(principal, action, resource) when { context.arguments has memo && context.time.hour < 8 && context.arguments.amount > 9 };',
    );
    expect(new Set(reads.attributes)).toEqual(new Set(['claims', 'team', 'readOnly']));
    expect(reads.context).toEqual([['arguments', 'amount'], ['arguments', 'memo'], ['time', 'hour']]);
  });

  it('reads all of the context when a policy uses it whole', async () => {
    const reads = await readsOf('permit(principal, action, resource) when { context == {} };', 'permit(principal, action, resource) when { context.mode == "x" };');
    expect(reads.context).toBe('all');
    expect(projectContext({ mode: 'x', depth: 1 }, contextMask(reads.context))).toEqual({ mode: 'x', depth: 1 });
  });

  it('projects the context and attributes to what is read, and nothing else', () => {
    const mask = contextMask([['arguments', 'amount'], ['time'], ['time', 'hour'], ['__proto__']]);
    const context = { arguments: { amount: 5, memo: 'secret' }, time: { hour: 1, minute: 2 }, mode: 'default', ['__proto__']: 'own' };
    const projected = projectContext(JSON.parse(JSON.stringify(context)), mask);
    expect(JSON.parse(JSON.stringify(projected))).toEqual({ arguments: { amount: 5 }, time: { hour: 1, minute: 2 }, ['__proto__']: 'own' });
    expect(Object.hasOwn(projected, '__proto__')).toBe(true);
    expect(projectAttributes({ roles: [], tenant: 't', claims: {} }, new Set(['roles', 'claims']))).toEqual({ roles: [], claims: {} });
    expect(projectAttributes({ roles: [], tenant: 't' }, 'all')).toEqual({ roles: [], tenant: 't' });
  });
});
