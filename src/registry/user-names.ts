import { createHash } from 'node:crypto';

const SAFE_USER_KEY = /^[A-Za-z0-9-]+$/;
/** `user_<key>_tool_<tool>` where key never contains `_`, so a prefix can only ever match one user (unlike ai4j). */
const USER_TOOL_NAME = /^user_([A-Za-z0-9-]+)_tool_(.+)$/;

/** The principal's `sub` when it is safe as a name part, else the first 12 hex chars of its SHA-256 (CONTRACT §3). */
export function userKey(sub: string): string {
  return SAFE_USER_KEY.test(sub) ? sub : createHash('sha256').update(sub).digest('hex').slice(0, 12);
}

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
