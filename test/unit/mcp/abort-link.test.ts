import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { followSharedSignal, linkAbort } from '../../../src/mcp/abort-link.js';

describe('linkAbort', () => {
  it('hands a signal seen for the first time through unchanged', () => {
    const parent = new AbortController();
    expect(linkAbort(parent.signal).signal).toBe(parent.signal);
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(0);
  });

  it('puts one listener on the parent however many children are linked', () => {
    const parent = new AbortController();
    const links = Array.from({ length: 50 }, () => linkAbort(parent.signal));
    expect(links.filter((link) => link.signal !== parent.signal)).toHaveLength(49);
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(1);
    for (const link of links) link.unlink();
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(1);
  });

  it('aborts children in flight with the parent reason, but not unlinked ones', () => {
    const parent = new AbortController();
    linkAbort(parent.signal);
    const live = linkAbort(parent.signal);
    const done = linkAbort(parent.signal);
    done.unlink();
    parent.abort(new Error('shutdown'));
    expect(live.signal?.aborted).toBe(true);
    expect((live.signal?.reason as Error).message).toBe('shutdown');
    expect(done.signal?.aborted).toBe(false);
  });

  it('returns an already-aborted child for an aborted parent and nothing for no parent', () => {
    const aborted = AbortSignal.abort();
    linkAbort(aborted);
    expect(linkAbort(aborted).signal?.aborted).toBe(true);
    expect(linkAbort(undefined).signal).toBeUndefined();
  });
});

describe('followSharedSignal', () => {
  it('puts one listener on a shared signal, fans an abort out to current followers only, and answers at once when already aborted', () => {
    const parent = new AbortController();
    const seen: string[] = [];
    const unsubscribes = Array.from({ length: 40 }, (_, index) => followSharedSignal(parent.signal, () => seen.push(`f${index}`)));
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(1);
    for (const unsubscribe of unsubscribes.slice(1)) unsubscribe();
    parent.abort(new Error('stop'));
    expect(seen).toEqual(['f0']);
    const late: unknown[] = [];
    followSharedSignal(parent.signal, (reason) => late.push(reason));
    expect(late).toEqual([parent.signal.reason]);
  });
});
