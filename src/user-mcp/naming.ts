// Names for user-level MCP services and tools (CONTRACT §3). The user key is matched whole: it can
// never hold `_`, so `user_1_tool_x` cannot be read as belonging to user `1_2` (ai4j's leak,
// REFERENCE.md "Routing").
import { MAX_TOOL_NAME, shortenName } from '../mcp/naming.js';
import { sha256Hex } from '../registry/canonical-json.js';

// One shortening rule for every generated name (CONTRACT §3).
export { MAX_TOOL_NAME, shortenName };
/**
 * A `sub` is used as its own key only up to this length (a UUID fits); longer ones are hashed like
 * any other, so `user_<key>_tool_` always survives the 64-character shortening intact.
 */
export const MAX_PLAIN_USER_KEY = 40;

const PLAIN_KEY = /^[A-Za-z0-9-]+$/;
const USER_TOOL = new RegExp(`^user_([A-Za-z0-9-]{1,${MAX_PLAIN_USER_KEY}})_tool_([A-Za-z0-9_-]+)$`);

/** The principal's `sub` when it is plain (`[A-Za-z0-9-]+`, ≤ 40 chars), else the first 12 hex chars of its SHA-256. */
export function userKey(sub: string): string {
  return PLAIN_KEY.test(sub) && sub.length <= MAX_PLAIN_USER_KEY ? sub : sha256Hex(sub).slice(0, 12);
}

export function userServiceKey(sub: string, serviceId: string): string {
  return `user_${userKey(sub)}_service_${serviceId}`;
}

/** `user_<userKey>_tool_<toolName>`, the tool name sanitized to `[A-Za-z0-9_-]` and kept within 64 chars. */
export function userToolName(sub: string, toolName: string): string {
  const sanitized = toolName.replace(/[^A-Za-z0-9_-]/g, '_') || '_';
  return shortenName(`user_${userKey(sub)}_tool_${sanitized}`);
}

/** Splits a user tool name; null unless the whole name has the exact shape. */
export function parseUserToolName(name: string): { userKey: string; toolName: string } | null {
  if (typeof name !== 'string' || name.length > MAX_TOOL_NAME) return null;
  const match = USER_TOOL.exec(name);
  return match ? { userKey: match[1], toolName: match[2] } : null;
}

/** True when `name` has the user-tool shape but belongs to someone other than `sub` (refused as an unknown name). */
export function isForeignUserToolName(name: string, sub: string): boolean {
  const parsed = parseUserToolName(name);
  return parsed !== null && parsed.userKey !== userKey(sub);
}
