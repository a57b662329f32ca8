/**
 * An abort source whose AbortSignal is created only when someone reads it. Most handlers never look
 * at their signal, and an AbortController per request (plus one per timed call) cost measurable time
 * and GC on the hot path. Aborting before the signal exists is remembered, so a late reader still sees
 * an aborted signal; a parent (the caller's signal) is linked only once the child signal exists.
 */
export class LazyAbort {
  private controller: AbortController | undefined;
  private abortedWith: { reason: unknown } | undefined;
  private unlink: (() => void) | undefined;

  constructor(private readonly parent?: () => AbortSignal) {}

  get signal(): AbortSignal {
    if (!this.controller) {
      const controller = new AbortController();
      this.controller = controller;
      if (this.abortedWith) controller.abort(this.abortedWith.reason);
      else if (this.parent) {
        const parent = this.parent();
        if (parent.aborted) controller.abort(parent.reason);
        else {
          const forward = (): void => controller.abort(parent.reason);
          parent.addEventListener('abort', forward, { once: true });
          this.unlink = () => parent.removeEventListener('abort', forward);
        }
      }
    }
    return this.controller.signal;
  }

  get aborted(): boolean {
    return this.abortedWith !== undefined || (this.controller?.signal.aborted ?? false);
  }

  abort(reason?: unknown): void {
    if (this.abortedWith) return;
    this.abortedWith = { reason };
    this.controller?.abort(reason);
  }

  /** Drops the link to the parent (the call is over). */
  dispose(): void {
    this.unlink?.();
    this.unlink = undefined;
  }
}
