import { randomUUID } from 'node:crypto';
import type { MessageBus } from '../../store/bus.js';
import type { Logger } from '../../call/types.js';
import type { Principal } from '../../call/principal.js';
import type { ToolMode } from '../../pipeline/types.js';
import type { JSONRPCNotification } from '@modelcontextprotocol/server';
import type { SseStream } from './sse-stream.js';

/** The bus channel of MCP sessions: every replica hears what any replica publishes (itself included). */
export const SESSION_CHANNEL = 'mcp-sessions';

/** What replicas tell each other about sessions; each is handled idempotently (the publisher hears it too). */
type SessionMessage =
  // One message per POST, however many of its calls the client cancelled (`request`: one, as older replicas send it).
  | { t: 'cancel'; session: string; requests?: string[]; request?: string }
  | { t: 'end'; session: string }
  | { t: 'stream'; session: string; stream: string }
  | { t: 'pool'; tenant: string; user: string }
  | { t: 'notify'; session: string; message: JSONRPCNotification };

/** A user's own pool changed on some replica (they registered or removed an MCP server). */
export function publishUserPoolChanged(bus: MessageBus, tenant: string, user: string): Promise<void> {
  return bus.publish(SESSION_CHANNEL, JSON.stringify({ t: 'pool', tenant, user } satisfies SessionMessage));
}

/** A notification for one session's client, sent on its GET stream by whichever replica holds it (if any does). */
export function publishSessionNotification(bus: MessageBus, session: string, message: JSONRPCNotification): Promise<void> {
  return bus.publish(SESSION_CHANNEL, JSON.stringify({ t: 'notify', session, message } satisfies SessionMessage));
}

interface OpenStream {
  readonly principal: Principal;
  readonly mode: ToolMode;
  readonly toolset: string | undefined;
  readonly stream: SseStream;
  /** The pool the client last heard about; a different one is announced with tools/list_changed. */
  fingerprint: string | undefined;
  /** One recheck at a time per stream; a change arriving meanwhile asks for one more. */
  checking: Promise<void> | undefined;
  again: boolean;
  /** This stream's name in the `stream` messages that make the newest stream of a session the only one. */
  readonly name: string;
  /** Its own `stream` message came back: any later one (in the bus' one order) names a newer stream. */
  announced: boolean;
}

export interface SessionHubDeps {
  bus: MessageBus;
  log: Logger;
  /** The fingerprint of the pool this stream's session sees now; undefined when there is none (tenant removed). */
  fingerprint(principal: Principal, mode: ToolMode, toolset: string | undefined): Promise<string | undefined>;
}


export interface SessionHub {
  /**
   * Registers the session's GET stream; the session's older stream, on this replica or another, closes
   * (a reconnecting client replaces it). `fingerprint` is the pool the client sees as the stream opens:
   * later differences are announced. Resolves once the bus took the stream's announcement: only then may
   * the client see the 200, so a reconnect it makes elsewhere is announced after this one, in every
   * replica's order (else the older stream could outlive the newer).
   */
  attach(session: string, open: Omit<OpenStream, 'checking' | 'again' | 'name' | 'announced'>): Promise<void>;
  detach(session: string, stream: SseStream): void;
  /** GET streams open on this replica. */
  openStreams(): number;
  /** The cancellation of one tools/call of a session (by its JSON-RPC id), until `done`. */
  trackCall(session: string, requestId: string | number): { signal: AbortSignal; done(): void };
  /**
   * notifications/cancelled: aborts the named calls on whichever replica runs them. The calls running here
   * are aborted here; the others cross the bus in one message, whatever their number.
   */
  cancel(session: string, requestIds: ReadonlyArray<string | number>): void;
  /** Sends a notification on the session's stream, on whichever replica holds it (none is kept for a session without one). */
  notify(session: string, message: JSONRPCNotification): void;
  /** DELETE (or eviction): closes the session's stream and cancels its calls, on every replica. */
  end(session: string): void;
  /** Rechecks the pools of every stream on this replica (the snapshot changed). */
  poolsMayHaveChanged(filter?: { tenant: string; user: string }): void;
  close(): void;
}

const requestKey = (id: string | number): string => JSON.stringify(id);

/** The request keys a `cancel` message names (an array from this version, one key from an older replica). */
const cancelledIn = (message: { requests?: unknown; request?: unknown }): string[] => {
  if (Array.isArray(message.requests)) return message.requests.filter((request): request is string => typeof request === 'string');
  return typeof message.request === 'string' ? [message.request] : [];
};

/**
 * The sessions this replica holds something of: open GET streams and running calls. Session records
 * themselves are in the store (sessions.ts); what one replica must tell another — cancel that call, end
 * that stream, that user's pool changed — goes over the bus, so the replica holding the stream or the
 * call acts on it whichever replica received the request.
 */
export function createSessionHub(deps: SessionHubDeps): SessionHub {
  const streams = new Map<string, OpenStream>();
  const calls = new Map<string, Map<string, AbortController>>();

  const publish = (message: SessionMessage): Promise<void> =>
    deps.bus.publish(SESSION_CHANNEL, JSON.stringify(message)).catch((error: unknown) => deps.log.warn({ err: error }, 'MCP session message not published'));

  const cancelHere = (session: string, request: string): void => {
    calls.get(session)?.get(request)?.abort(new Error('cancelled by the MCP client (notifications/cancelled)'));
  };
  const endHere = (session: string): void => {
    streams.get(session)?.stream.close();
    streams.delete(session);
    for (const controller of calls.get(session)?.values() ?? []) controller.abort(new Error('the MCP session ended'));
    calls.delete(session);
  };

  const closeStream = (session: string, open: OpenStream): void => {
    if (streams.get(session) === open) streams.delete(session);
    open.stream.close();
  };
  // Every replica hears the `stream` messages in the bus' one order, so all agree which stream is newest:
  // one announced before (its own message already came back) is older and closes; one whose message is
  // still on its way is newer and stays. One stream per session, so no notification goes out twice.
  const newestStream = (session: string, name: string): void => {
    const open = streams.get(session);
    if (!open) return;
    if (open.name === name) open.announced = true;
    else if (open.announced) closeStream(session, open);
  };

  const recheck = (open: OpenStream): void => {
    if (open.checking) {
      open.again = true;
      return;
    }
    open.checking = (async () => {
      do {
        open.again = false;
        const now = await deps.fingerprint(open.principal, open.mode, open.toolset).catch((error: unknown) => {
          deps.log.warn({ err: error }, 'pool of an MCP session could not be rebuilt');
          return open.fingerprint;
        });
        if (now !== undefined && now !== open.fingerprint) {
          open.fingerprint = now;
          open.stream.send({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
        }
      } while (open.again && !open.stream.closed);
      open.checking = undefined;
    })();
  };

  const unsubscribe = deps.bus.subscribe(SESSION_CHANNEL, (raw) => {
    let message: SessionMessage;
    try {
      message = JSON.parse(raw) as SessionMessage;
    } catch {
      return;
    }
    if (message.t === 'cancel') for (const request of cancelledIn(message)) cancelHere(message.session, request);
    else if (message.t === 'end') endHere(message.session);
    else if (message.t === 'stream') newestStream(message.session, message.stream);
    else if (message.t === 'notify') streams.get(message.session)?.stream.send(message.message);
    else if (message.t === 'pool') hub.poolsMayHaveChanged({ tenant: message.tenant, user: message.user });
  });

  const hub: SessionHub = {
    attach(session, open) {
      const older = streams.get(session);
      if (older) closeStream(session, older);
      const name = randomUUID();
      streams.set(session, { ...open, checking: undefined, again: false, name, announced: false });
      return publish({ t: 'stream', session, stream: name });
    },
    detach(session, stream) {
      if (streams.get(session)?.stream === stream) streams.delete(session);
    },
    trackCall(session, requestId) {
      const key = requestKey(requestId);
      const controller = new AbortController();
      let running = calls.get(session);
      if (!running) calls.set(session, (running = new Map()));
      running.set(key, controller);
      return {
        signal: controller.signal,
        done() {
          const current = calls.get(session);
          if (current?.get(key) !== controller) return;
          current.delete(key);
          if (current.size === 0) calls.delete(session);
        },
      };
    },
    cancel(session, requestIds) {
      const running = calls.get(session);
      const elsewhere = new Set<string>();
      for (const id of requestIds) {
        const request = requestKey(id);
        // A call running here runs nowhere else (one JSON-RPC id per call of a session): no replica need hear it.
        if (running?.has(request)) cancelHere(session, request);
        else elsewhere.add(request);
      }
      if (elsewhere.size > 0) void publish({ t: 'cancel', session, requests: [...elsewhere] });
    },
    notify(session, message) {
      void publish({ t: 'notify', session, message });
    },
    end(session) {
      endHere(session);
      void publish({ t: 'end', session });
    },
    openStreams: () => streams.size,
    poolsMayHaveChanged(filter) {
      for (const open of streams.values()) {
        if (filter && (open.principal.tenant !== filter.tenant || open.principal.user !== filter.user)) continue;
        recheck(open);
      }
    },
    close() {
      unsubscribe();
      for (const session of [...streams.keys()]) endHere(session);
    },
  };
  return hub;
}
