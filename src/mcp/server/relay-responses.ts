// Requests toolgate sends to an MCP client on a call's response stream (relayed elicitation and sampling),
// and the client's answers, which arrive as a later POST of the session — on this replica or another.
import { randomBytes } from 'node:crypto';
import { isJSONRPCErrorResponse, isJSONRPCResultResponse, type JSONRPCRequest } from '@modelcontextprotocol/server';
import type { MessageBus } from '../../store/bus.js';
import type { Logger } from '../../call/types.js';

const CHANNEL = 'mcp-relay-answers';
/** The ids of relayed requests: 128 random bits after a prefix; an answer with any other id answers none of them. */
const RELAY_ID_PREFIX = 'relay-';
const RELAY_ID = /^relay-[A-Za-z0-9_-]{22}$/;

type Answer = { result: Record<string, unknown> } | { error: { code: number; message: string } };

export interface RelayRequests {
  /**
   * Sends `method` to the session's client with `send` (the call's response stream) under a fresh
   * unguessable id and waits for its answer, at most `timeoutMs` and until `signal` ends.
   */
  ask(session: string, send: (message: JSONRPCRequest) => Promise<void>, request: { method: string; params: Record<string, unknown> }, signal: AbortSignal, timeoutMs: number): Promise<Record<string, unknown>>;
  /** A POST of the session made only of JSON-RPC answers: they are delivered wherever their request waits. */
  answers(session: string, body: unknown): boolean;
  close(): void;
}

const messagesOf = (body: unknown): unknown[] => (Array.isArray(body) ? body : [body]);

export function createRelayRequests(bus: MessageBus, log: Logger): RelayRequests {
  // Keyed by session and id: an answer posted by another session never settles a request of this one.
  const waiting = new Map<string, (answer: Answer) => void>();
  const keyOf = (session: string, id: string | number): string => `${session}\u0000${String(id)}`;

  const deliver = (session: string, message: unknown): void => {
    if (isJSONRPCResultResponse(message)) waiting.get(keyOf(session, message.id))?.({ result: message.result });
    else if (isJSONRPCErrorResponse(message) && message.id !== undefined) waiting.get(keyOf(session, message.id))?.({ error: message.error });
  };
  const unsubscribe = bus.subscribe(CHANNEL, (raw) => {
    try {
      // One bus message per POST carries its answers (`message`: one, as older replicas send it).
      const { session, messages, message } = JSON.parse(raw) as { session: string; messages?: unknown; message?: unknown };
      for (const answer of Array.isArray(messages) ? messages : [message]) deliver(session, answer);
    } catch {
      // not ours
    }
  });

  return {
    async ask(session, send, request, signal, timeoutMs) {
      const id = `${RELAY_ID_PREFIX}${randomBytes(16).toString('base64url')}`;
      const key = keyOf(session, id);
      const answered = new Promise<Answer>((resolve, reject) => {
        const timer = setTimeout(() => finish(() => reject(new Error(`no answer within ${timeoutMs} ms`))), timeoutMs);
        const onAbort = (): void => finish(() => reject(new Error('the call ended before the client answered')));
        const finish = (settle: () => void): void => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          waiting.delete(key);
          settle();
        };
        if (signal.aborted) return onAbort();
        signal.addEventListener('abort', onAbort, { once: true });
        waiting.set(key, (answer) => finish(() => resolve(answer)));
      });
      await send({ jsonrpc: '2.0', id, method: request.method, params: request.params }).catch((error: unknown) => {
        waiting.get(key)?.({ error: { code: -32603, message: `not sent: ${error instanceof Error ? error.message : String(error)}` } });
      });
      const answer = await answered;
      if ('error' in answer) throw new Error(`the client answered with an error: ${answer.error.message}`);
      return answer.result;
    },
    answers(session, body) {
      const messages = messagesOf(body);
      if (messages.length === 0 || !messages.every((message) => isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message))) return false;
      const elsewhere: unknown[] = [];
      for (const message of messages) {
        // An answer whose request waits here is delivered here; only the others cross the bus (where every
        // replica, this one included, would otherwise handle each answer once more), and only those whose id
        // toolgate could have made: an answer to no request of ours is dropped where it arrived.
        const id = (message as { id?: string | number }).id;
        if (id !== undefined && waiting.has(keyOf(session, id))) deliver(session, message);
        else if (typeof id === 'string' && RELAY_ID.test(id)) elsewhere.push(message);
      }
      // All of a POST's answers in one bus message, however many it holds.
      if (elsewhere.length > 0) bus.publish(CHANNEL, JSON.stringify({ session, messages: elsewhere })).catch((error: unknown) => log.warn({ err: error }, 'relay answers not published'));
      return true;
    },
    close() {
      unsubscribe();
    },
  };
}
