// Names for user-level MCP services and tools (CONTRACT §3). The user key is matched whole: it can
// never hold `_`, so `user_1_tool_x` cannot be read as belonging to user `1_2` (ai4j's leak,
// REFERENCE.md "Routing").
import { createHash } from 'node:crypto';

export const MAX_TOOL_NAME = 64;
/**
 * A `sub` is used as its own key only up to this length (a UUID fits); longer ones are hashed like
 * any other, so `user_<key>_tool_` always survives the 64-character shortening intact.
 */
export const MAX_PLAIN_USER_KEY = 40;

const PLAIN_KEY = /^[A-Za-z0-9-]+$/;
const USER_TOOL = new RegExp(`^user_([A-Za-z0-9-]{1,${MAX_PLAIN_USER_KEY}})_tool_([A-Za-z0-9_-]+)$`);

const sha256Hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** The principal's `sub` when it is plain (`[A-Za-z0-9-]+`, ≤ 40 chars), else the first 12 hex chars of its SHA-256. */
export function userKey(sub: string): string {
  return PLAIN_KEY.test(sub) && sub.length <= MAX_PLAIN_USER_KEY ? sub : sha256Hex(sub).slice(0, 12);
}

export function userServiceKey(sub: string, serviceId: string): string {
  return `user_${userKey(sub)}_service_${serviceId}`;
}

/** Deterministic shortening: kept prefix + `_` + 8 hex of the SHA-256 of the full name. */
export function shortenName(name: string, max = MAX_TOOL_NAME): string {
  if (name.length <= max) return name;
  return `${name.slice(0, max - 9)}_${sha256Hex(name).slice(0, 8)}`;
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

/** True when `name` has the user-tool shape but belongs to someone other than `sub` (→ PERMISSION_DENIED). */
export function isForeignUserToolName(name: string, sub: string): boolean {
  const parsed = parseUserToolName(name);
  return parsed !== null && parsed.userKey !== userKey(sub);
}
