// A user's own MCP servers, kept in the StateStore so every replica sees the same ones (docs/architecture.md#state-store).
// One record per user holds all of their registrations: listing them (on every tool listing of that user,
// and every call their tools can change) is one GET, never a keyspace scan, and every change is a
// compare-and-set on that record, so the per-user limit holds across replicas. The key holds the tenant
// and the raw `sub`, both URL-encoded: never the user key alone (two subs may share a hashed key).
import { deleteIfUnchanged } from '../../store/delete-if-unchanged.js';
import type { StateStore } from '../../store/types.js';
import { checkEgress, MAX_URL_LENGTH, type EgressOptions } from '../../egress/check-egress.js';
import { userServiceKey } from '../../registry/user-names.js';
import { authView, checkRegistrationAuth, type RegistrationAuthDeps, type UserMcpAuth, type UserMcpAuthView } from './registration-auth.js';

export type UserMcpTransport = 'streamable-http' | 'sse';
export const USER_MCP_TRANSPORTS: readonly UserMcpTransport[] = ['streamable-http', 'sse'];

export interface UserMcpRegistration {
  serviceId: string;
  url: string;
  transport: UserMcpTransport;
  /** The user's own upstream credentials: never logged, never listed back. */
  headers: Record<string, string>;
  /** The user's own OAuth client for this server (registration-auth.ts): its secret sealed. */
  auth?: UserMcpAuth;
  createdAt: string;
}

/** What GET answers: header names only. */
export interface UserMcpRegistrationView {
  serviceId: string;
  serviceKey: string;
  url: string;
  transport: UserMcpTransport;
  headerNames: string[];
  auth?: UserMcpAuthView;
  createdAt: string;
}

export interface UserMcpRegistrationInput {
  url: unknown;
  transport?: unknown;
  headers?: unknown;
  auth?: unknown;
}

export type PutRegistrationResult =
  | { ok: true; created: boolean; registration: UserMcpRegistration }
  | { ok: false; code: 'TG_BAD_REQUEST' | 'TG_CONFLICT'; message: string }
  /** `message` is the one wording callers hear; `reason` (how the check saw the URL) is for the log and the audit. */
  | { ok: false; code: 'TG_EGRESS_DENIED'; message: string; reason: string };

export const SERVICE_ID = /^[A-Za-z0-9-]{1,32}$/;
export const MAX_HEADERS = 32;
export const MAX_HEADER_VALUE = 4096;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/;
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
// Headers the transport or toolgate owns; a registration may not set (or spoof) them.
const RESERVED_HEADERS = new Set([
  'host', 'content-length', 'content-type', 'connection', 'transfer-encoding', 'upgrade', 'te', 'trailer',
  'keep-alive', 'expect', 'accept', 'accept-encoding', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id',
  'forwarded', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'x-real-ip',
]);

export interface UserMcpRegistrations {
  list(tenant: string, sub: string): Promise<UserMcpRegistration[]>;
  get(tenant: string, sub: string, serviceId: string): Promise<UserMcpRegistration | undefined>;
  /** Validates (shape, egress, per-user limit) and stores; the verdict is data. */
  put(tenant: string, sub: string, serviceId: string, input: UserMcpRegistrationInput): Promise<PutRegistrationResult>;
  delete(tenant: string, sub: string, serviceId: string): Promise<boolean>;
}

export interface UserMcpRegistrationsOptions {
  store: StateStore;
  egress: EgressOptions;
  /** Per-tenant limit (TenantConfig.userMcp.maxServers). */
  maxServers: (tenant: string) => number;
  /** What an `auth` object needs (the vault, the public URL); without it, `auth` is refused. */
  auth?: Omit<RegistrationAuthDeps, 'egress'>;
  /** A server with `auth` was removed, or its URL or `auth` changed: the owner's connection to it goes. */
  onAuthChanged?: (tenant: string, sub: string, serviceId: string) => Promise<void>;
  now?: () => Date;
}

/** Every registration of one tenant's users starts with this (the tenant is encoded: it never holds `/`). */
export const tenantRegistrationPrefix = (tenant: string): string => `user-mcp/${encodeURIComponent(tenant)}/`;

export const registrationPrefix = (tenant: string, sub: string): string => `${tenantRegistrationPrefix(tenant)}${encodeURIComponent(sub)}/`;

/** GET view: everything but header values. */
export function registrationView(sub: string, registration: UserMcpRegistration): UserMcpRegistrationView {
  return {
    serviceId: registration.serviceId,
    serviceKey: userServiceKey(sub, registration.serviceId),
    url: registration.url,
    transport: registration.transport,
    headerNames: Object.keys(registration.headers),
    ...(registration.auth ? { auth: authView(registration.auth) } : {}),
    createdAt: registration.createdAt,
  };
}

type Checked<T> = { ok: true; value: T } | { ok: false; message: string };

function checkHeaders(headers: unknown): Checked<Record<string, string>> {
  if (headers === undefined) return { ok: true, value: {} };
  if (headers === null || typeof headers !== 'object' || Array.isArray(headers)) return { ok: false, message: 'headers must be an object' };
  const entries = Object.entries(headers);
  if (entries.length > MAX_HEADERS) return { ok: false, message: `at most ${MAX_HEADERS} headers` };
  // A null-prototype object: a `__proto__` header name stays a plain key, never a prototype.
  const value: Record<string, string> = Object.create(null) as Record<string, string>;
  const seen = new Set<string>();
  for (const [name, headerValue] of entries) {
    const lower = name.toLowerCase();
    if (!HEADER_NAME.test(name)) return { ok: false, message: `header name ${JSON.stringify(name.slice(0, 64))} is not valid` };
    if (RESERVED_HEADERS.has(lower) || lower.startsWith('x-toolgate-') || lower.startsWith('proxy-')) {
      return { ok: false, message: `header ${name} may not be set` };
    }
    if (seen.has(lower)) return { ok: false, message: `header ${name} is given twice` };
    seen.add(lower);
    // The value is never echoed: it is a credential.
    if (typeof headerValue !== 'string' || headerValue.length > MAX_HEADER_VALUE || !HEADER_VALUE.test(headerValue)) {
      return { ok: false, message: `header ${name} must be a string of at most ${MAX_HEADER_VALUE} printable characters` };
    }
    value[name] = headerValue;
  }
  return { ok: true, value };
}

type StoredRegistrations = Record<string, UserMcpRegistration>;

/** Oldest first: when two of a user's servers offer the same tool name, the older registration wins. */
function listed(value: string | null): UserMcpRegistration[] {
  if (value === null) return [];
  return Object.values(parseStored(value)).sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.serviceId.localeCompare(b.serviceId));
}

function parseStored(value: string | null): StoredRegistrations {
  if (value === null) return {};
  try {
    const parsed = JSON.parse(value) as unknown;
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return {};
    const valid: StoredRegistrations = {};
    for (const [serviceId, registration] of Object.entries(parsed as Record<string, UserMcpRegistration>)) {
      if (SERVICE_ID.test(serviceId) && typeof registration?.url === 'string' && registration.serviceId === serviceId) valid[serviceId] = registration;
    }
    return valid;
  } catch {
    return {};
  }
}

/** Concurrent writers of one user's record retry their compare-and-set this many times. */
const MAX_WRITE_ATTEMPTS = 16;

export function createUserMcpRegistrations(options: UserMcpRegistrationsOptions): UserMcpRegistrations {
  const { store } = options;
  const now = options.now ?? (() => new Date());
  const keyOf = (tenant: string, sub: string): string => `user-mcp/${encodeURIComponent(tenant)}/${encodeURIComponent(sub)}`;

  /** Applies `change` to the user's record atomically; `change` answers the new record, or a refusal. */
  async function update<T>(tenant: string, sub: string, change: (current: StoredRegistrations) => { next: StoredRegistrations; result: T } | { refuse: T }): Promise<T> {
    const key = keyOf(tenant, sub);
    for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt += 1) {
      const raw = await store.get(key);
      const decided = change(parseStored(raw));
      if ('refuse' in decided) return decided.refuse;
      // An emptied record is deleted, but only while it still holds what was read: a concurrent writer's
      // registration is never lost, and no empty record outlives its last server.
      if (Object.keys(decided.next).length === 0) {
        if (raw === null || (await deleteIfUnchanged(store, key, raw))) return decided.result;
        continue;
      }
      const nextValue = JSON.stringify(decided.next);
      const written = raw === null ? await store.setIfAbsent(key, nextValue) : await store.compareAndSet(key, raw, nextValue);
      if (written) return decided.result;
    }
    throw new Error('user MCP registrations: too many concurrent updates');
  }

  // Not async: one promise fewer on a path every tool listing takes.
  function list(tenant: string, sub: string): Promise<UserMcpRegistration[]> {
    return store.get(keyOf(tenant, sub)).then(listed);
  }

  async function get(tenant: string, sub: string, serviceId: string): Promise<UserMcpRegistration | undefined> {
    if (!SERVICE_ID.test(serviceId)) return undefined;
    const registrations = parseStored(await store.get(keyOf(tenant, sub)));
    return Object.hasOwn(registrations, serviceId) ? registrations[serviceId] : undefined;
  }

  async function put(tenant: string, sub: string, serviceId: string, input: UserMcpRegistrationInput): Promise<PutRegistrationResult> {
    if (!SERVICE_ID.test(serviceId)) return { ok: false, code: 'TG_BAD_REQUEST', message: 'serviceId must match ^[A-Za-z0-9-]{1,32}$' };
    if (typeof input?.url !== 'string' || input.url.length > MAX_URL_LENGTH) {
      return { ok: false, code: 'TG_BAD_REQUEST', message: `url must be a string of at most ${MAX_URL_LENGTH} characters` };
    }
    const transport = input.transport ?? 'streamable-http';
    if (!USER_MCP_TRANSPORTS.includes(transport as UserMcpTransport)) {
      return { ok: false, code: 'TG_BAD_REQUEST', message: 'transport must be streamable-http or sse' };
    }
    const headers = checkHeaders(input.headers);
    if (!headers.ok) return { ok: false, code: 'TG_BAD_REQUEST', message: headers.message };
    const egress = await checkEgress(input.url, options.egress);
    if (!egress.ok) return egress;
    let auth: UserMcpAuth | undefined;
    if (input.auth !== undefined) {
      if (!options.auth) return { ok: false, code: 'TG_BAD_REQUEST', message: 'auth is not available on this gateway' };
      // The server's token goes in Authorization: a static one beside it would be sent instead.
      if (Object.keys(headers.value).some((name) => name.toLowerCase() === 'authorization')) return { ok: false, code: 'TG_BAD_REQUEST', message: 'auth and an Authorization header exclude each other' };
      const checked = await checkRegistrationAuth(input.auth, { tenant, sub, serviceId }, { ...options.auth, egress: options.egress });
      if (!checked.ok) return checked;
      auth = checked.auth;
    }

    const limit = options.maxServers(tenant);
    const createdAt = now().toISOString();
    let before: UserMcpRegistration | undefined;
    const result = await update<PutRegistrationResult>(tenant, sub, (current) => {
      const previous = Object.hasOwn(current, serviceId) ? current[serviceId] : undefined;
      before = previous;
      if (!previous && Object.keys(current).length >= limit) {
        return { refuse: { ok: false, code: 'TG_CONFLICT', message: `at most ${limit} MCP servers per user` } };
      }
      const registration: UserMcpRegistration = {
        serviceId,
        url: egress.url.href,
        transport: transport as UserMcpTransport,
        headers: { ...headers.value },
        ...(auth ? { auth } : {}),
        createdAt: previous?.createdAt ?? createdAt,
      };
      return { next: { ...current, [serviceId]: registration }, result: { ok: true, created: !previous, registration } };
    });
    // A connection made for one server and authorization server never follows the registration elsewhere.
    if (result.ok && before?.auth && (before.url !== result.registration.url || JSON.stringify(before.auth) !== JSON.stringify(result.registration.auth))) {
      await options.onAuthChanged?.(tenant, sub, serviceId);
    }
    return result;
  }

  async function remove(tenant: string, sub: string, serviceId: string): Promise<boolean> {
    if (!SERVICE_ID.test(serviceId)) return false;
    let hadAuth = false;
    const removed = await update<boolean>(tenant, sub, (current) => {
      if (!Object.hasOwn(current, serviceId)) return { refuse: false };
      hadAuth = current[serviceId]?.auth !== undefined;
      const next = { ...current };
      delete next[serviceId];
      return { next, result: true };
    });
    if (removed && hadAuth) await options.onAuthChanged?.(tenant, sub, serviceId);
    return removed;
  }

  return { list, get, put, delete: remove };
}
