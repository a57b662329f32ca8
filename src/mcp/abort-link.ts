// A child AbortSignal per operation, without piling listeners on a long-lived parent signal.
//
// Both the SDK's `Protocol.request` (on the caller's signal) and fetch (on the transport's signal)
// add an abort listener per request and never remove it themselves, so a long-lived signal shared by
// many calls builds up listeners (MaxListenersExceededWarning, and memory held until the signal dies).
// Here the first operation on a signal uses it directly (the common case: one signal per call, and
// an AbortController + listener per call costs ~5–8 % of throughput at high rates); every later one
// gets a child, and the parent carries exactly one more listener that fans an abort out to them. So a
// long-lived signal holds at most two listeners, whatever the number of calls.

const used = new WeakSet<AbortSignal>();

const noop = (): void => {};

export interface LinkedSignal {
  signal: AbortSignal | undefined;
  /** Detaches the child from its parent; call once the operation has settled. */
  unlink: () => void;
}

export function linkAbort(parent: AbortSignal | null | undefined): LinkedSignal {
  if (!parent) return { signal: undefined, unlink: noop };
  if (!used.has(parent)) {
    used.add(parent);
    return { signal: parent, unlink: noop };
  }
  const child = new AbortController();
  const unlink = followSharedSignal(parent, (reason) => child.abort(reason));
  return { signal: child.signal, unlink };
}

const followers = new WeakMap<AbortSignal, Set<(reason: unknown) => void>>();

/**
 * Calls `listener` once when `signal` aborts (at once if it has); returns an unsubscribe. However many
 * operations follow one long-lived signal at a time, the signal carries a single listener of ours.
 */
export function followSharedSignal(signal: AbortSignal, listener: (reason: unknown) => void): () => void {
  if (signal.aborted) {
    listener(signal.reason);
    return noop;
  }
  let set = followers.get(signal);
  if (!set) {
    const created = new Set<(reason: unknown) => void>();
    followers.set(signal, created);
    signal.addEventListener(
      'abort',
      () => {
        followers.delete(signal);
        for (const follower of created) follower(signal.reason);
      },
      { once: true },
    );
    set = created;
  }
  const registered = set;
  registered.add(listener);
  return () => void registered.delete(listener);
}
