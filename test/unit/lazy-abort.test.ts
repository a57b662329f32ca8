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
});
