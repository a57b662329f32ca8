// URL-mode elicitation for a call that needs the user's own connection (docs/security-model.md#upstream-identity;
// MCP 2025-11-25): a client that declared `elicitation.url` at initialize gets the spec's
// URLElicitationRequiredError (-32042) naming the connect URL instead of a tool error, and hears
// `notifications/elicitation/complete` on its session's stream once the connection is made. A client
// without the capability (or without a session, where nothing says what it declared) keeps the tool error.
import { createHash, randomUUID } from 'node:crypto';
import { UrlElicitationRequiredError } from '@modelcontextprotocol/server';
import { sha256Hex } from '../../shared/canonical-json.js';
import type { MessageBus } from '../../store/bus.js';
import type { StateStore } from '../../store/types.js';
import type { Principal } from '../../call/principal.js';
import type { ToolResult } from '../../call/types.js';
import { FLOW_TTL_MS } from '../../upstream-auth/connections.js';
import { connectionUrlOf } from './call-result.js';
import { publishSessionNotification } from './session-hub.js';

/** Elicitations awaiting one connection (a user's few sessions retrying one service); older ones are dropped. */
const MAX_PENDING = 8;
const WRITE_ATTEMPTS = 4;

const digest = (...parts: string[]): string => sha256Hex(parts.join('\u0000')).slice(0, 32);
const pendingKey = (owner: ConnectionOwner): string => `mcp-url-elicitation-pending:${digest(owner.tenant, owner.user, owner.service)}`;

interface Pending {
  session: string;
  elicitationId: string;
}

export interface ConnectionOwner {
  tenant: string;
  user: string;
  service: string;
}

const parsePending = (raw: string | null): Pending[] => {
  if (raw === null) return [];
  try {
    const value = JSON.parse(raw) as unknown;
    return Array.isArray(value) ? value.filter((entry): entry is Pending => typeof entry?.session === 'string' && typeof entry?.elicitationId === 'string') : [];
  } catch {
    return [];
  }
};

export interface UrlElicitations {
  /**
   * The -32042 error a CONNECTION_REQUIRED result becomes for this session, or undefined (another result, no
   * session, a client that did not declare the capability (relay-to-client.ts keeps what it declared), or a
   * store that cannot say): then the tool error.
   */
  errorFor(result: ToolResult, principal: Principal, session: { id: string; declaresUrl: boolean } | undefined): Promise<UrlElicitationRequiredError | undefined>;
}

export function createUrlElicitations(store: StateStore): UrlElicitations {
  /** Remembers the elicitation so the callback can tell the session; a lost race only loses a notification. */
  async function remember(owner: ConnectionOwner, entry: Pending): Promise<void> {
    const key = pendingKey(owner);
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt += 1) {
      const raw = await store.get(key);
      const next = JSON.stringify([...parsePending(raw), entry].slice(-MAX_PENDING));
      if (raw === null ? await store.setIfAbsent(key, next, { ttlMs: FLOW_TTL_MS }) : await store.compareAndSet(key, raw, next, { ttlMs: FLOW_TTL_MS })) return;
    }
  }

  return {
    async errorFor(result, principal, session) {
      const url = connectionUrlOf(result);
      const trace = result.trace as { service?: unknown; reason?: unknown } | null;
      if (session?.declaresUrl !== true || url === undefined || typeof trace?.service !== 'string') return undefined;
      try {
        const elicitationId = randomUUID();
        await remember({ tenant: principal.tenant, user: principal.user, service: trace.service }, { session: session.id, elicitationId });
        // The message names the service, never a URL (the spec allows one only in `url`): not the tool error's
        // text, which carries the link for a model.
        const message = `${trace.service} acts as you: connect your account first${typeof trace.reason === 'string' ? ` (${trace.reason})` : ''}`;
        return new UrlElicitationRequiredError([{ mode: 'url', elicitationId, url, message }], message);
      } catch {
        // A store that cannot answer: the tool error still carries the URL.
        return undefined;
      }
    },
  };
}

/**
 * A connection was made: every session that was sent an elicitation for it hears that it completed, on
 * whichever replica holds its stream. A session that is gone hears nothing; the call itself is not retried
 * here (the client retries it, as the spec has it).
 */
export async function connectionCompleted(store: StateStore, bus: MessageBus, owner: ConnectionOwner): Promise<void> {
  const key = pendingKey(owner);
  const raw = await store.get(key);
  if (raw === null || !(await store.delete(key))) return;
  await Promise.all(
    parsePending(raw).map(({ session, elicitationId }) =>
      publishSessionNotification(bus, session, { jsonrpc: '2.0', method: 'notifications/elicitation/complete', params: { elicitationId } }),
    ),
  );
}
