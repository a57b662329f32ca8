import { describe, expect, it } from 'vitest';
import { LazyAbort } from '../../src/execution/lazy-abort.js';

describe('LazyAbort', () => {
  it('creates no signal until read, and remembers an abort that came first', () => {
    const lazy = new LazyAbort();
    lazy.abort('late reader');
    expect(lazy.aborted).toBe(true);
    expect(lazy.signal.aborted).toBe(true);
    expect(lazy.signal.reason).toBe('late reader');
  });

  it('aborts a signal already handed out', () => {
    const lazy = new LazyAbort();
    const signal = lazy.signal;
    let fired = 0;
    signal.addEventListener('abort', () => (fired += 1));
    lazy.abort('now');
    lazy.abort('twice');
    expect(fired).toBe(1);
    expect(signal.reason).toBe('now');
  });

  it('follows its parent once read, and stops following after dispose', () => {
    const parent = new AbortController();
    let parentReads = 0;
    const child = new LazyAbort(() => {
      parentReads += 1;
      return parent.signal;
    });
    expect(parentReads).toBe(0);
    const signal = child.signal;
    expect(parentReads).toBe(1);
    parent.abort('client left');
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe('client left');

    const other = new AbortController();
    const disposed = new LazyAbort(() => other.signal);
    const disposedSignal = disposed.signal;
    disposed.dispose();
    other.abort();
    expect(disposedSignal.aborted).toBe(false);
  });

  it('sees an already-aborted parent when first read', () => {
    const parent = new AbortController();
    parent.abort('gone');
    expect(new LazyAbort(() => parent.signal).signal.reason).toBe('gone');
  });

  it('follows a LazyAbort parent by callback, without making the parent a signal', () => {
    const parent = new LazyAbort();
    const child = new LazyAbort(parent);
    const signal = child.signal;
    expect((parent as unknown as { controller: unknown }).controller).toBeUndefined();
    parent.abort('timed out upstream');
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe('timed out upstream');

    const other = new LazyAbort();
    const disposed = new LazyAbort(other);
    const disposedSignal = disposed.signal;
    disposed.dispose();
    other.abort('late');
    expect(disposedSignal.aborted).toBe(false);
  });

  it('connects its arm only on first use, and disconnects it on dispose', () => {
    let armed = 0;
    let disarmed = 0;
    let fire: ((reason: unknown) => void) | undefined;
    const lazy = new LazyAbort(undefined, (abort) => {
      armed += 1;
      fire = abort;
      return () => void (disarmed += 1);
    });
    expect(armed).toBe(0);
    const unsubscribe = lazy.onAbort(() => {});
    expect(armed).toBe(1);
    void lazy.signal;
    expect(armed).toBe(1);
    unsubscribe();
    fire?.('client left');
    expect(lazy.signal.reason).toBe('client left');
    lazy.dispose();
    expect(disarmed).toBe(1);
  });

  it('calls a subscriber at once when already aborted', () => {
    const lazy = new LazyAbort();
    lazy.abort('done');
    const seen: unknown[] = [];
    lazy.onAbort((reason) => seen.push(reason));
    expect(seen).toEqual(['done']);
  });
});
