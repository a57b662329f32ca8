// The cancellation toolgate hands the MCP SDK for one upstream call, without an AbortSignal.
//
// The SDK's Protocol.request reads four things from `options.signal`: `aborted`, `reason`,
// `throwIfAborted()` and one `addEventListener('abort', …)` (never removed). Measured with the floor
// harness of `npm run bench` (Fastify + one SDK stdio client → server-everything echo, 16 connections,
// pinned): a fresh AbortController per call, as every governed call would need, took the floor from
// about 7,000 to about 5,500 req/s, about 25 µs of gateway CPU per call, and the upstream, fed fewer
// requests per read, spent about 14 µs more per call too. This object gives the SDK exactly those four
// members, so a call costs one small allocation; it is per call, so the SDK's listener dies with it.

type Listener = () => void;

export class SdkCancel {
  aborted = false;
  reason: unknown = undefined;
  private listeners: Listener[] | undefined;

  /** The SDK boundary: typed as the AbortSignal its request options declare; only the members above are read. */
  get signal(): AbortSignal {
    return this as unknown as AbortSignal;
  }

  throwIfAborted(): void {
    if (this.aborted) throw this.reason;
  }

  addEventListener(type: string, listener: Listener): void {
    if (type === 'abort') (this.listeners ??= []).push(listener);
  }

  removeEventListener(type: string, listener: Listener): void {
    if (type !== 'abort' || !this.listeners) return;
    const index = this.listeners.indexOf(listener);
    if (index >= 0) this.listeners.splice(index, 1);
  }

  /** Bound, so a cancellation source can be handed `cancel.abort` directly. */
  readonly abort = (reason: unknown): void => {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listeners = this.listeners;
    this.listeners = undefined;
    if (listeners) for (const listener of listeners) listener();
  };
}
