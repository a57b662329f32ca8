/** Where a LazyAbort hears about its caller's abort: another LazyAbort, or a function giving a signal. */
export type AbortParent = LazyAbort | (() => AbortSignal);

/** Connects an abort source (a response's `close`, say) when first needed; returns how to disconnect it. */
export type AbortArm = (abort: (reason: unknown) => void) => (() => void) | undefined;

const noop = (): void => {};

/** An arm that follows an AbortSignal: aborts at once if it already has, else on its `abort` event. */
export function followSignal(signal: AbortSignal): AbortArm {
  return (abort) => {
    if (signal.aborted) {
      abort(signal.reason);
      return undefined;
    }
    const forward = (): void => abort(signal.reason);
    signal.addEventListener('abort', forward, { once: true });
    return () => signal.removeEventListener('abort', forward);
  };
}

/** Subscribes to an AbortSignal as `LazyAbort.onAbort` does: at once if it has aborted, else once on abort. */
export function onSignalAbort(signal: AbortSignal, listener: (reason: unknown) => void): () => void {
  return followSignal(signal)(listener) ?? noop;
}

/**
 * An abort source whose AbortSignal is created only when someone reads it. Most handlers never look
 * at their signal, and on Node 20 creating an AbortSignal costs about 4 µs and a listener on one about
 * 1.5 µs, so a call must not pay for signals it never reads. Aborting before the signal exists is
 * remembered, so a late reader still sees an aborted signal. Links are made only on first use (a read of
 * `signal` or an `onAbort` subscriber): a LazyAbort parent is followed through a plain callback, without
 * creating the parent's AbortSignal, and an `arm` (e.g. the HTTP response's close event) is connected
 * only then.
 */
export class LazyAbort {
  private controller: AbortController | undefined;
  private abortedWith: { reason: unknown } | undefined;
  private listeners: Array<(reason: unknown) => void> | undefined;
  private linked = false;
  private unlinks: Array<() => void> | undefined;

  constructor(
    private readonly parent?: AbortParent,
    private readonly arm?: AbortArm,
  ) {}

  get signal(): AbortSignal {
    if (!this.controller) {
      const controller = new AbortController();
      this.controller = controller;
      if (this.abortedWith) controller.abort(this.abortedWith.reason);
      else this.link();
    }
    return this.controller.signal;
  }

  /** True once aborted, or once a LazyAbort parent has (even before this one linked to it). */
  get aborted(): boolean {
    return this.abortedWith !== undefined || (this.controller?.signal.aborted ?? false) || (this.parent instanceof LazyAbort && this.parent.aborted);
  }

  /** Calls `listener` once when this aborts (at once if it already has); returns an unsubscribe. */
  onAbort(listener: (reason: unknown) => void): () => void {
    if (this.abortedWith) {
      listener(this.abortedWith.reason);
      return noop;
    }
    const listeners = (this.listeners ??= []);
    listeners.push(listener);
    this.link();
    return () => {
      const index = listeners.indexOf(listener);
      if (index >= 0) listeners.splice(index, 1);
    };
  }

  abort(reason?: unknown): void {
    if (this.abortedWith) return;
    this.abortedWith = { reason };
    this.controller?.abort(reason);
    const listeners = this.listeners;
    this.listeners = undefined;
    if (listeners) for (const listener of listeners) listener(reason);
  }

  /** Drops the links to the parent and the arm (the call is over). */
  dispose(): void {
    const unlinks = this.unlinks;
    this.unlinks = undefined;
    if (unlinks) for (const unlink of unlinks) unlink();
  }

  private link(): void {
    if (this.linked) return;
    this.linked = true;
    const abort = (reason: unknown): void => this.abort(reason);
    const parent = this.parent;
    if (parent instanceof LazyAbort) this.keep(parent.onAbort(abort));
    else if (parent) this.connect(followSignal(parent()), abort);
    if (this.arm) this.connect(this.arm, abort);
  }

  private connect(arm: AbortArm, abort: (reason: unknown) => void): void {
    if (this.abortedWith) return;
    const disarm = arm(abort);
    if (disarm) this.keep(disarm);
  }

  private keep(unlink: () => void): void {
    (this.unlinks ??= []).push(unlink);
  }
}
