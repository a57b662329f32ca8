// Calls of 2026-07-28 callers that an upstream asked something (docs/mcp.md#questions-in-the-modern-era). The
// upstream's connection waits for the answer (a legacy upstream's elicitation/create, or the SDK client driving
// a modern upstream's input_required), so the call stays on the replica that runs it — held, bounded in time
// and in number per tenant — while the caller gets the question as `input_required` and comes back, on this
// replica or any other, with its answer. An answer that lands elsewhere crosses the bus to the holder, which
// sends back what the call did next (another question, its result, or "still working").
import { randomBytes, randomUUID } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/server';
import type { MessageBus } from '../../store/bus.js';
import type { Logger } from '../../call/types.js';
import { Cancellation } from '../../shared/cancellation.js';

/** A question of the upstream, as the caller's InputRequest carries it (the method and its params, untouched). */
export interface HeldQuestion {
  method: 'elicitation/create' | 'sampling/createMessage';
  params: Record<string, unknown>;
}

/** What a held call did next, as the caller's next answer says it (serialisable: it may cross the bus). */
export type HeldOutcome =
  | { kind: 'input'; questions: Record<string, HeldQuestion> }
  | { kind: 'done'; result: CallToolResult }
  /** `cause`, the error itself, only on the replica where the call ran (it does not cross the bus). */
  | { kind: 'failed'; error: { code: number; message: string; data?: unknown }; cause?: unknown }
  /** The call needs the user's connection to an upstream, and the caller can open a URL: asked to, then run again. */
  | { kind: 'connect'; url: string; message: string }
  /** Still running after the wait: the caller asks again with the next state. */
  | { kind: 'working' }
  /** No such held call here (ended long ago, its replica restarted, or not this caller's). */
  | { kind: 'gone' };

export type Settled = Extract<HeldOutcome, { kind: 'done' | 'failed' | 'connect' }>;

export interface Owner {
  tenant: string;
  user: string;
}

/** Per replica and tenant: calls held waiting for their callers' answers at once. */
export const MAX_HELD_PER_TENANT = 64;
/** A finished held call keeps its outcome this long for the caller's last retry, then is forgotten. */
export const HELD_LINGER_MS = 60_000;
/** The longest one continuation waits for what the call does next before answering "still working". */
export const CONTINUATION_WAIT_MS = 30_000;
/** Beyond the holder's own wait: how long an answer sent over the bus waits for the holder's reply. */
const BUS_GRACE_MS = 5_000;
/** How long an answer sent over the bus waits for the holder to say it heard it: past it, the holder is gone. */
const ACK_WAIT_MS = 2_000;
const ACK = '"heard"';
const CHANNEL_PREFIX = 'mcp-held:';
const REPLY_PREFIX = 'mcp-held-reply:';

interface Pending {
  question: HeldQuestion;
  resolve: (answer: Record<string, unknown>) => void;
}

export interface HeldCall {
  readonly id: string;
  readonly owner: Owner;
  /** The call's own cancellation: the caller closed a request it was waiting on, the question expired, a shutdown. */
  readonly cancellation: Cancellation;
  /** `cancellation`'s signal, made when first read (most calls are never asked anything). */
  readonly signal: AbortSignal;
  /** The relay's ask: parks the question until the caller's answer arrives (or the signal / timeout ends it). */
  ask(question: HeldQuestion, signal: AbortSignal, timeoutMs: number): Promise<Record<string, unknown>>;
  /** The call ended: its outcome waits for the caller. */
  settle(outcome: Settled): void;
  /** The caller's answers, keyed as the questions were (unknown keys are ignored). */
  answer(responses: Record<string, unknown>): void;
  /**
   * What the call does next: its open questions, its outcome, or `working` after `waitMs` (none: wait for one of
   * the two). A request that goes away while it waits (`attached` aborts) cancels the call, as for any call.
   */
  next(attached: Cancellation | undefined, waitMs: number | undefined): Promise<HeldOutcome>;
  abort(reason: string): void;
}

export interface HeldCalls {
  /** This replica's name in the states it mints: an answer for a call held here is sent here. */
  readonly replica: string;
  /** A call that may be asked something; it is held (counted, findable) only from its first question on. */
  create(owner: Owner): HeldCall;
  /** Delivers `responses` to held call `id` on replica `holder` and returns what it did next. */
  resume(holder: string, id: string, owner: Owner, responses: Record<string, unknown>, attached: Cancellation): Promise<HeldOutcome>;
  /** Held calls on this replica (for tests and the bounds). */
  size(): number;
  close(): void;
}

const sameOwner = (a: Owner, b: Owner): boolean => a.tenant === b.tenant && a.user === b.user;

export function createHeldCalls(bus: MessageBus, log: Logger, options: { waitMs?: number; maxPerTenant?: number } = {}): HeldCalls {
  const replica = randomUUID();
  const waitMs = options.waitMs ?? CONTINUATION_WAIT_MS;
  const maxPerTenant = options.maxPerTenant ?? MAX_HELD_PER_TENANT;
  const held = new Map<string, HeldCall>();
  const perTenant = new Map<string, number>();

  const hold = (call: HeldCall): boolean => {
    const count = perTenant.get(call.owner.tenant) ?? 0;
    if (count >= maxPerTenant) return false;
    perTenant.set(call.owner.tenant, count + 1);
    held.set(call.id, call);
    return true;
  };
  const release = (call: HeldCall): void => {
    if (held.get(call.id) !== call) return;
    held.delete(call.id);
    const count = (perTenant.get(call.owner.tenant) ?? 1) - 1;
    if (count <= 0) perTenant.delete(call.owner.tenant);
    else perTenant.set(call.owner.tenant, count);
  };

  function create(owner: Owner): HeldCall {
    // Made when the call is first held: most calls are never asked anything, and 16 random bytes per call showed
    // in the modern era's profile (bench/results.md, issue 45).
    let id: string | undefined;
    const cancellation = new Cancellation();
    const pending = new Map<string, Pending>();
    const wakers = new Set<() => void>();
    let asked = 0;
    let isHeld = false;
    let outcome: Settled | undefined;
    const wake = (): void => {
      for (const waker of [...wakers]) waker();
    };
    const current = (): HeldOutcome | undefined => {
      if (outcome) return outcome;
      if (pending.size === 0) return undefined;
      return { kind: 'input', questions: Object.fromEntries([...pending].map(([key, { question }]) => [key, question])) };
    };
    const call: HeldCall = {
      get id() {
        id ??= randomBytes(16).toString('base64url');
        return id;
      },
      owner,
      cancellation,
      get signal() {
        return cancellation.signal;
      },
      ask(question, signal, timeoutMs) {
        if (outcome) return Promise.reject(new Error('the call has ended'));
        if (!isHeld) {
          if (!hold(call)) return Promise.reject(new Error(`more than ${maxPerTenant} calls of this tenant wait for their callers' answers on this replica`));
          isHeld = true;
        }
        asked += 1;
        const key = `q${asked}`;
        return new Promise((resolve, reject) => {
          const finish = (settle: () => void): void => {
            clearTimeout(timer);
            signal.removeEventListener('abort', onAbort);
            pending.delete(key);
            settle();
          };
          const onAbort = (): void => finish(() => reject(new Error('the call ended before the client answered')));
          const timer = setTimeout(() => finish(() => reject(new Error(`no answer within ${timeoutMs} ms`))), timeoutMs);
          if (signal.aborted) return onAbort();
          signal.addEventListener('abort', onAbort, { once: true });
          pending.set(key, { question, resolve: (answer) => finish(() => resolve(answer)) });
          wake();
        });
      },
      settle(settled) {
        if (outcome) return;
        outcome = settled;
        wake();
        // Kept a while for the caller's last retry; a call never held has nobody coming back.
        if (isHeld) setTimeout(() => release(call), HELD_LINGER_MS).unref();
      },
      answer(responses) {
        for (const [key, answer] of Object.entries(responses)) {
          if (typeof answer === 'object' && answer !== null && !Array.isArray(answer)) pending.get(key)?.resolve(answer as Record<string, unknown>);
        }
      },
      async next(attached, wait) {
        const cancel = (): void => call.abort('the client closed the request');
        // Called at once when the request has already gone.
        const stop = attached?.follow(cancel);
        try {
          for (;;) {
            const now = current();
            if (now) return now;
            const woken = await new Promise<boolean>((resolve) => {
              const waker = (): void => done(true);
              const timer = wait === undefined ? undefined : setTimeout(() => done(false), wait);
              const done = (value: boolean): void => {
                clearTimeout(timer);
                wakers.delete(waker);
                resolve(value);
              };
              wakers.add(waker);
            });
            if (!woken) return current() ?? { kind: 'working' };
            // An outcome is final: nothing asked beside it is sent.
            if (outcome) return outcome;
            // Questions asked together (a modern upstream's several inputRequests) go out together.
            await new Promise((resolve) => setImmediate(resolve));
          }
        } finally {
          stop?.();
        }
      },
      abort(reason) {
        cancellation.abort(new Error(reason));
      },
    };
    return call;
  }

  // Answers for calls held here, sent by the replica the caller's retry reached.
  const unsubscribe = bus.subscribe(`${CHANNEL_PREFIX}${replica}`, (raw) => {
    let message: { id: string; owner: Owner; responses: Record<string, unknown>; reply: string };
    try {
      message = JSON.parse(raw) as typeof message;
    } catch {
      return;
    }
    const call = held.get(message.id);
    // Heard: the sender now waits for the outcome, not for a replica that may be gone.
    void bus.publish(message.reply, ACK).catch(() => undefined);
    const answered = call && sameOwner(call.owner, message.owner) ? (call.answer(message.responses ?? {}), call.next(undefined, waitMs)) : Promise.resolve<HeldOutcome>({ kind: 'gone' });
    void answered
      .then((outcome) => bus.publish(message.reply, JSON.stringify(outcome.kind === 'failed' ? { kind: outcome.kind, error: outcome.error } : outcome)))
      .catch((error: unknown) => log.warn({ err: error }, 'a held call’s next step was not sent back'));
  });

  return {
    replica,
    create,
    size: () => held.size,
    async resume(holder, id, owner, responses, attached) {
      if (holder === replica) {
        const call = held.get(id);
        if (!call || !sameOwner(call.owner, owner)) return { kind: 'gone' };
        call.answer(responses);
        return call.next(attached, waitMs);
      }
      const reply = `${REPLY_PREFIX}${randomBytes(16).toString('base64url')}`;
      return new Promise<HeldOutcome>((resolve) => {
        const done = (outcome: HeldOutcome): void => {
          clearTimeout(timer);
          stop();
          resolve(outcome);
        };
        let timer = setTimeout(() => done({ kind: 'gone' }), ACK_WAIT_MS);
        const stop = bus.subscribe(reply, (raw) => {
          if (raw === ACK) {
            clearTimeout(timer);
            timer = setTimeout(() => done({ kind: 'gone' }), waitMs + BUS_GRACE_MS);
            return;
          }
          try {
            done(JSON.parse(raw) as HeldOutcome);
          } catch {
            done({ kind: 'gone' });
          }
        });
        bus.publish(`${CHANNEL_PREFIX}${holder}`, JSON.stringify({ id, owner, responses, reply })).catch(() => done({ kind: 'gone' }));
      });
    },
    close() {
      unsubscribe();
      for (const call of held.values()) call.abort('the server is shutting down');
      held.clear();
      perTenant.clear();
    },
  };
}
