/**
 * A call's cancellation whose AbortSignal is created only when something reads `signal`. Most calls finish
 * without any handler looking at it, and on Node 20 creating an AbortSignal costs microseconds, several
 * times what the rest of a call's cancellation plumbing does (the measurement is in the commit that added
 * this file). Policies follow it through `follow`, a plain callback, so linking the timeout's attempt to its
 * caller makes no signal either. Aborting before the signal exists is remembered: a late reader gets an
 * aborted signal with the same reason.
 */
export class LazySignal {
  private controller: AbortController | undefined;
  private abortedWith: { reason: unknown } | undefined;
  private followers: Array<(reason: unknown) => void> | undefined;

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.abortedWith) this.controller.abort(this.abortedWith.reason);
    }
    return this.controller.signal;
  }

  get aborted(): boolean {
    return this.abortedWith !== undefined;
  }

  get reason(): unknown {
    return this.abortedWith?.reason;
  }

  abort(reason: unknown): void {
    if (this.abortedWith) return;
    this.abortedWith = { reason };
    this.controller?.abort(reason);
    const followers = this.followers;
    this.followers = undefined;
    if (followers) for (const follower of followers) follower(reason);
  }

  /** Calls `listener` once when this aborts (at once if it has); returns how to stop following. */
  follow(listener: (reason: unknown) => void): () => void {
    if (this.abortedWith) {
      listener(this.abortedWith.reason);
      return noop;
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
