// Parses and validates one policy set off the event loop (src/cedar/validate.ts starts it with a deadline),
// and returns it split into policies under their ids, with the listing form of each (listing-set.ts).
import { parentPort, workerData } from 'node:worker_threads';
import { listingPolicy } from './listing-set.js';
import { loadCedar } from './wasm.js';
import type { ValidationReply, ValidationRequest } from './validate.js';

const request = workerData as ValidationRequest;
const cedar = await loadCedar();

/** Cedar's id (policy0…) → the policy's `@id` annotation when it has one; for naming policies in errors. */
function annotatedIds(): Record<string, string> {
  const parts = cedar.policySetTextToParts(request.text);
  const names: Record<string, string> = {};
  if (parts.type === 'failure') return names;
  const cedarIds = parts.policies.map((_, index) => `policy${index}`).sort();
  parts.policies.forEach((text, index) => {
    const json = cedar.policyToJson(text);
    const id = json.type === 'success' ? json.json.annotations?.id : undefined;
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
  const listing: Record<string, NonNullable<ReturnType<typeof listingPolicy>>> = {};
  const forbids: string[] = [];
  // Cedar numbers policies policy0, policy1… in text order and returns the parts sorted by that id; a policy
  // is known by its `@id` annotation when it has one (unique), by Cedar's id otherwise.
  const cedarIds = parts.policies.map((_, index) => `policy${index}`).sort();
  parts.policies.forEach((text, index) => {
    const json = cedar.policyToJson(text);
    if (json.type === 'failure') return;
    const annotated = json.json.annotations?.id;
    const id = annotated !== undefined && !Object.hasOwn(policies, annotated) ? annotated : cedarIds[index]!;
    policies[id] = text;
    if (json.json.effect === 'forbid') forbids.push(id);
    const listed = listingPolicy(json.json);
    if (listed) listing[id] = listed;
  });
  return { ok: true, policies, listing, forbids };
}

parentPort!.postMessage(reply());
