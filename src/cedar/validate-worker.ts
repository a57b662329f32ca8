// Parses and validates one policy set off the event loop (src/cedar/validate.ts starts it with a deadline),
// and returns it split into policies under their ids, with the listing form of each (listing-set.ts).
import { parentPort, workerData } from 'node:worker_threads';
import { listingPolicy } from './listing-set.js';
import { likeBudget } from './like-bound.js';
import { addReads, type PolicyReads } from './reads.js';
import { loadCedar, type CedarWasm } from './wasm.js';
import type { ValidationProblem, ValidationReply, ValidationRequest } from './validate.js';

const request = workerData as ValidationRequest;
const cedar = await loadCedar();
// The deadline starts now: compiling the module is the worker's own cost, not the text's.
parentPort!.postMessage('loaded');

/** A policy's `@id` annotation, and whether it is a `forbid`, read from its text (Cedar's own print of it). */
function headerOf(text: string): { id: string | undefined; forbid: boolean } {
  const id = /@id\s*\(\s*"((?:[^"\\]|\\.)*)"\s*\)/.exec(text)?.[1];
  const effect = /(?:^|[\s)])(permit|forbid)\s*\(/.exec(text.replace(/@[A-Za-z_]\w*\s*(?:\(\s*"(?:[^"\\]|\\.)*"\s*\))?/g, ' '))?.[1];
  return { id, forbid: effect === 'forbid' };
}

/** Cedar numbers policies policy0, policy1… in text order and returns the parts sorted by that id. */
function cedarIdsOf(count: number): string[] {
  return Array.from({ length: count }, (_, index) => `policy${index}`).sort();
}

/** Cedar's id (policy0…) → the policy's `@id` annotation when it has one; for naming policies in errors. */
function annotatedIds(): Record<string, string> {
  const parts = cedar.policySetTextToParts(request.text);
  const names: Record<string, string> = {};
  if (parts.type === 'failure') return names;
  const cedarIds = cedarIdsOf(parts.policies.length);
  parts.policies.forEach((text, index) => {
    const { id } = headerOf(text);
    if (id !== undefined) names[cedarIds[index]!] = id;
  });
  return names;
}

function reply(): ValidationReply {
  const answer = cedar.validate({ schema: request.schema, policies: { staticPolicies: request.text }, validationSettings: { mode: 'strict' } });
  if (answer.type === 'failure') return { ok: false, problems: answer.errors.map((error) => ({ message: error.message, offset: error.sourceLocations?.[0]?.start })) };
  if (answer.validationErrors.length > 0) {
    const names = annotatedIds();
    return {
      ok: false,
      problems: answer.validationErrors.map(({ policyId, error }) => ({ policy: names[policyId] ?? policyId, message: error.message, help: error.help ?? undefined, offset: error.sourceLocations?.[0]?.start })),
    };
  }
  const parts = cedar.policySetTextToParts(request.text);
  if (parts.type === 'failure') return { ok: false, problems: parts.errors.map((error) => ({ message: error.message })) };
  if (parts.policy_templates.length > 0) return { ok: false, problems: [{ message: 'policy templates are not supported; write static policies' }] };
  const policies: Record<string, string> = {};
  const listing: Record<string, CedarWasm.Policy> = {};
  const forbids: string[] = [];
  const reads: PolicyReads = { attributes: [], context: [] };
  // A policy is known by its `@id` annotation when it has one (unique), by Cedar's id otherwise.
  const cedarIds = cedarIdsOf(parts.policies.length);
  const overLike = likeBudget();
  let problem: ValidationProblem | undefined;
  parts.policies.forEach((text, index) => {
    const header = headerOf(text);
    const id = header.id !== undefined && !Object.hasOwn(policies, header.id) ? header.id : cedarIds[index]!;
    policies[id] = text;
    if (header.forbid) forbids.push(id);
    const json = cedar.policyToJson(text);
    // Every bound below reads the JSON form: a policy without one is refused rather than let through unmeasured.
    const unread = json.type === 'failure' ? `the policy could not be read: ${json.errors[0]?.message ?? 'no JSON form'}` : undefined;
    if (json.type === 'success') addReads(reads, json.json);
    const like = unread ?? (json.type === 'success' ? overLike(json.json) : undefined);
    if (like !== undefined && problem === undefined) problem = { policy: id, message: like };
    // Only a policy that mentions the context can read what a listing does not know: the others list as written.
    if (!/\bcontext\b/.test(text)) {
      listing[id] = text;
      return;
    }
    const listed = json.type === 'success' ? listingPolicy(json.json) : undefined;
    if (listed) listing[id] = listed;
  });
  if (problem) return { ok: false, problems: [problem] };
  return { ok: true, policies, listing, forbids, reads };
}

parentPort!.postMessage(reply());
