import type { UserNamespace } from './resolve.js';
/**
 * Any name in some user's tool namespace. Deliberately broader than src/user-mcp/naming.ts's exact
 * parser: routing refuses every such name that is not the caller's own, whatever its length or tail.
 */
const USER_TOOL_NAME = /^user_([A-Za-z0-9-]+)_tool_(.+)$/;

// One definition of the user key (src/user-mcp/naming.ts): listing and routing must agree on it.
export { userKey } from '../user-mcp/naming.js';
import { userKey } from '../user-mcp/naming.js';

export function userToolPrefix(sub: string): string {
  return `user_${userKey(sub)}_tool_`;
}

export function isUserToolName(name: string): boolean {
  return USER_TOOL_NAME.test(name);
}

/** The caller's view of user tool namespaces, for name resolution (src/registry/resolve.ts). */
export function userNamespace(sub: string): UserNamespace {
  return { ownPrefix: userToolPrefix(sub), isUserToolName };
}
