// Names and URIs of upstream resources and prompts as toolgate's callers see them
// (docs/architecture.md#resources-and-prompts). Each carries its service's scope and id, which contain no
// `/`, so two services can never collide and a name parses back to exactly one service.
import { compileLinear, isRefusal, MatchBudgetError } from '../patterns/linear-regex.js';
import type { McpServiceScope } from '../registry/tool-provider.js';

export const RESOURCE_URI_PREFIX = 'toolgate://';
const SCOPES: readonly McpServiceScope[] = ['global', 'local', 'user'];
const isScope = (value: string): value is McpServiceScope => SCOPES.some((scope) => scope === value);

/** A namespaced name taken apart: the service it belongs to and the upstream's own name or URI. */
export interface Namespaced {
  scope: McpServiceScope;
  service: string;
  upstream: string;
}

/** `global/everything/simple-prompt`: the form prompts are named in, and the form globs match. */
export function namespacedName(scope: McpServiceScope, service: string, upstream: string): string {
  return `${scope}/${service}/${upstream}`;
}

/** `toolgate://global/everything/demo://resource/static/document/a.md`: the upstream URI (or template) kept verbatim after the service. */
export function namespacedUri(scope: McpServiceScope, service: string, upstream: string): string {
  return `${RESOURCE_URI_PREFIX}${namespacedName(scope, service, upstream)}`;
}

export function parseName(name: string): Namespaced | undefined {
  const first = name.indexOf('/');
  const second = first < 0 ? -1 : name.indexOf('/', first + 1);
  if (second < 0) return undefined;
  const scope = name.slice(0, first);
  const service = name.slice(first + 1, second);
  const upstream = name.slice(second + 1);
  if (!isScope(scope) || service === '' || upstream === '') return undefined;
  return { scope, service, upstream };
}

export function parseUri(uri: string): Namespaced | undefined {
  return uri.startsWith(RESOURCE_URI_PREFIX) ? parseName(uri.slice(RESOURCE_URI_PREFIX.length)) : undefined;
}

/** The glob form of a namespaced URI: without the `toolgate://` prefix. */
export const globSubject = (uri: string): string => (uri.startsWith(RESOURCE_URI_PREFIX) ? uri.slice(RESOURCE_URI_PREFIX.length) : uri);

export type Matcher = (subject: string) => boolean;

/** A glob's RE2 source: `*` and `?` span any characters (newlines too); every other character is literal. */
const globSource = (pattern: string): string =>
  pattern.replace(/[^\p{L}\p{N}_]/gu, (c) => (c === '*' ? '(?s:.*)' : c === '?' ? '(?s:.)' : c.charCodeAt(0) < 0x80 ? `\\${c}` : c));

/**
 * Globs over namespaced names, where `*` spans any characters (`/` included: resource URIs are full of
 * them) and `?` one character; everything else is literal. No patterns: nothing matches. The operator's
 * globs meet an upstream's names and URIs (a user's own server's too), so they run on the linear-time
 * engine (docs/security-model.md#untrusted-patterns-and-schemas); a glob the engine refuses, or a name too
 * long to check, takes `otherwise` (false for an allow list, true for a deny list: fail closed).
 */
export function compileNameGlobs(patterns: readonly string[], otherwise = false): Matcher {
  if (patterns.length === 0) return () => false;
  if (patterns.includes('*')) return () => true;
  const matchers: Matcher[] = patterns.map((pattern) => {
    const compiled = compileLinear(`^${globSource(pattern)}$`, 're2');
    if (isRefusal(compiled)) return () => otherwise;
    return (subject) => {
      try {
        return compiled.test(subject);
      } catch (error) {
        if (error instanceof MatchBudgetError) return otherwise;
        throw error;
      }
    };
  });
  return (subject) => matchers.some((match) => match(subject));
}

/** A tenant's allow/deny pair: allowed when an allow glob matches and no deny glob does. */
export function compileAllowDeny(rules: { allow: readonly string[]; deny: readonly string[] }): Matcher {
  const allow = compileNameGlobs(rules.allow);
  const deny = compileNameGlobs(rules.deny, true);
  return (subject) => allow(subject) && !deny(subject);
}
