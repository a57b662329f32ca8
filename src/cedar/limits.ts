// The bounds a tenant's Cedar policies and a call's arguments are held to (docs/governance.md#what-is-cached).
// Policy text is outside input as much as arguments are: a set is measured before it is parsed, and parsed
// first in a worker with a deadline, so a hostile set never holds the event loop other tenants share.

/** Characters of policy text per tenant (inline or all its files together). */
export const MAX_POLICY_CHARS = 262_144;
/**
 * Policies per tenant. Every call evaluates the whole set on the event loop: one decision over 100 policies took
 * 25-100 ms on this 2-core machine at a load average of 30, so the cap keeps one call's evaluation short.
 */
export const MAX_POLICIES = 200;
/** Brackets nested inside one another (`(`, `[`, `{`): Cedar's parser recurses on them. */
export const MAX_NESTING = 32;
/** How long parsing and validating one set in the worker may take. */
export const VALIDATE_DEADLINE_MS = 10_000;

/**
 * Characters of all `like` patterns of a set together. Matching costs up to the pattern's length times the
 * string's: 1,024 pattern characters against an 8,192-character argument took 13 ms of CPU per call on this
 * 2-core machine (src/cedar/like-bound.ts).
 */
export const MAX_LIKE_PATTERN_CHARS = 512;
/** A string argument longer than this is not handed to Cedar (a policy reading it errors, see decide.ts). */
export const MAX_ARGUMENT_STRING_CHARS = 8_192;
/** Elements of a set argument handed to Cedar. */
export const MAX_ARGUMENT_SET_ELEMENTS = 256;
/** Listing decisions remembered per tenant and snapshot before the cache starts again. */
export const MAX_LISTING_DECISIONS = 50_000;
/** Call, read and get decisions remembered per tenant and compile before the cache starts again. */
export const MAX_CALL_DECISIONS = 10_000;
/** A decision whose key (principal, resource and the context policies read) is longer is not remembered. */
export const MAX_DECISION_KEY_CHARS = 2_048;
