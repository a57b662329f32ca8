/**
 * A call's cancellation: the one type the execution path, the policies and the drain pass around. Its
 * AbortSignal is created only when something reads `signal`: most calls finish without any handler looking
 * at it, and creating an AbortSignal costs microseconds, several times what the rest of a call's cancellation
 * plumbing does (bench/results.md). Policies read `aborted` and `reason` and link through `follow`, a plain
 * callback, so neither creates a signal. Aborting before the signal exists is remembered: a late reader gets
 * an aborted signal with the same reason.
 *
 * A signal made elsewhere (an MCP client's request, a batch's per-call signal) becomes a Cancellation with
 * `Cancellation.of`; such a one ends when its signal does, never through `abort`.
 */
export class Cancellation {
  private controller: AbortController | undefined;
  private abortedWith: { reason: unknown } | undefined;
  private followers: Array<(reason: unknown) => void> | undefined;
  /** Set by `of`: the signal this cancellation is. */
  private adopted: AbortSignal | undefined;

  /** The cancellation of a signal made elsewhere; following it adds a listener to that signal only while followed. */
  static of(signal: AbortSignal): Cancellation {
    const cancellation = new Cancellation();
    cancellation.adopted = signal;
    return cancellation;
  }

  get signal(): AbortSignal {
    if (this.adopted) return this.adopted;
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.abortedWith) this.controller.abort(this.abortedWith.reason);
    }
    return this.controller.signal;
  }

  get aborted(): boolean {
    return this.adopted ? this.adopted.aborted : this.abortedWith !== undefined;
  }

  get reason(): unknown {
    return this.adopted ? this.adopted.reason : this.abortedWith?.reason;
  }

  abort(reason: unknown): void {
    if (this.adopted) throw new TypeError('a cancellation made from a signal ends when that signal aborts');
    if (this.abortedWith) return;
    this.abortedWith = { reason };
    this.controller?.abort(reason);
    const followers = this.followers;
    this.followers = undefined;
    if (followers) for (const follower of followers) follower(reason);
  }

  /** Calls `listener` once when this aborts (at once if it has); returns how to stop following. */
  follow(listener: (reason: unknown) => void): () => void {
    if (this.aborted) {
      listener(this.reason);
      return noop;
    }
    const adopted = this.adopted;
    if (adopted) {
      const forward = (): void => listener(adopted.reason);
      adopted.addEventListener('abort', forward, { once: true });
      return () => adopted.removeEventListener('abort', forward);
    }
    const followers = (this.followers ??= []);
    followers.push(listener);
    return () => {
      // Once aborted the list is being (or has been) walked: a follower that stops following from inside its
      // own callback (the timeout policy settling) must not shift the list under the walk and skip the next.
      if (this.followers !== followers) return;
      const index = followers.indexOf(listener);
      if (index >= 0) followers.splice(index, 1);
    };
  }
}

const noop = (): void => {};
