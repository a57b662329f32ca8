/**
 * A Redis Cluster hash tag: keys that one script touches together carry the same tag, so the Cluster
 * keeps them in one slot (docs/architecture.md#state-store). Tag the smallest entity that needs it (a
 * tenant's sessions, not the tenant's every key), so many tenants still spread over every master. The
 * text must hold no brace, or the tag would end early: callers pass a hex digest or an encoded name.
 */
export function hashTag(text: string): string {
  if (text === '' || /[{}]/.test(text)) throw new Error('a hash tag needs non-empty text without braces');
  return `{${text}}`;
}
