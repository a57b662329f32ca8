// The user tool namespace `user_<key>_tool_<name>`: user-level MCP services list their tools under it and
// routing refuses every name in it that is not the caller's own, so both read the one definition here.
// The user key is matched whole: it can never hold `_`, so `user_1_tool_x` cannot be read as belonging
// to user `1_2` (see docs/security-model.md).
import { sha256Hex } from '../shared/canonical-json.js';
import type { UserNamespace } from './resolve.js';
import { shortenName } from './tool-names.js';

/**
 * A `sub` is used as its own key only up to this length (a UUID fits); longer ones are hashed like
 * any other, so `user_<key>_tool_` always survives the 64-character shortening intact.
 */
const MAX_PLAIN_USER_KEY = 40;

const PLAIN_KEY = /^[A-Za-z0-9-]+$/;
/** Any name in some user's tool namespace, whatever its length or tail: refused unless it is the caller's. */
const USER_TOOL_NAME = /^user_([A-Za-z0-9-]+)_tool_(.+)$/;

/** The principal's `sub` when it is plain (`[A-Za-z0-9-]+`, ≤ 40 chars), else the first 12 hex chars of its SHA-256. */
export function userKey(sub: string): string {
  return PLAIN_KEY.test(sub) && sub.length <= MAX_PLAIN_USER_KEY ? sub : sha256Hex(sub).slice(0, 12);
}

export function userServiceKey(sub: string, serviceId: string): string {
  return `user_${userKey(sub)}_service_${serviceId}`;
}

export function userToolPrefix(sub: string): string {
  return `user_${userKey(sub)}_tool_`;
}

/** `user_<userKey>_tool_<toolName>`, the tool name sanitized to `[A-Za-z0-9_-]` and kept within 64 chars. */
export function userToolName(sub: string, toolName: string): string {
  const sanitized = toolName.replace(/[^A-Za-z0-9_-]/g, '_') || '_';
  return shortenName(`${userToolPrefix(sub)}${sanitized}`);
}

export function isUserToolName(name: string): boolean {
  return USER_TOOL_NAME.test(name);
}

/**
 * The caller's view of user tool namespaces, for name resolution (src/registry/resolve.ts). Made for every
 * call, but its prefix is read only for a name the caller's pool does not hold: worked out then, not before.
 */
class CallerNamespace implements UserNamespace {
  constructor(private readonly sub: string) {}

  get ownPrefix(): string {
    return userToolPrefix(this.sub);
  }

  isUserToolName(name: string): boolean {
    return isUserToolName(name);
  }
}

export function userNamespace(sub: string): UserNamespace {
  return new CallerNamespace(sub);
}
