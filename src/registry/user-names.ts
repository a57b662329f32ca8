/** `user_<key>_tool_<tool>` where key never contains `_`, so a prefix can only ever match one user (unlike ai4j). */
const USER_TOOL_NAME = /^user_([A-Za-z0-9-]+)_tool_(.+)$/;

// One definition of the user key (src/user-mcp/naming.ts): listing and routing must agree on it.
export { userKey } from '../user-mcp/naming.js';
import { userKey } from '../user-mcp/naming.js';

export function userToolPrefix(sub: string): string {
  return `user_${userKey(sub)}_tool_`;
}

export function parseUserToolName(name: string): { userKey: string; toolName: string } | null {
  const match = USER_TOOL_NAME.exec(name);
  return match ? { userKey: match[1]!, toolName: match[2]! } : null;
}

export function isUserToolName(name: string): boolean {
  return USER_TOOL_NAME.test(name);
}
