// Resources and prompts decided by the tenant's Cedar policies (docs/governance.md#cedar-policies): `read` on a
// `Resource` (its namespaced URI), `get` on a `Prompt` (its namespaced name), at listing and at each read or
// get. Only narrowing: what the tenant's globs hide stays hidden. No arguments are known at listing (prompt
// arguments are never handed to Cedar), so the listing and the read or get decide alike.
import type { Principal } from '../call/principal.js';
import type { CedarEngine } from './engine.js';

export function catalogAdmits(cedar: CedarEngine | undefined, principal: Principal, kind: 'resource' | 'prompt', name: string, now = Date.now()): boolean {
  if (!cedar) return true;
  const facts = { mode: 'default' as const, depth: 0, now };
  return (kind === 'resource' ? cedar.decideResource(principal, name, facts) : cedar.decidePrompt(principal, name, facts)).allowed;
}
