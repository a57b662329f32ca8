import { describe, expect, it } from 'vitest';
import { gcWindow } from '../../bench/gc-per-request.js';

// Two lines as Node 24's --trace-gc-nvp writes them (shortened), a scavenge and a mark-compact, with other output between.
const scavenge = '[1:0x1:0]      80 ms: pause=0.5 mutator=76.6 gc=s reduce_memory=0 allocated=4000000 promoted=100 new_space_survived=900 nodes_promoted=0';
const markCompact = '[1:0x1:0]     300 ms: pause=2.5 mutator=210.0 gc=mc reduce_memory=0 allocated=2000000 promoted=0 new_space_survived=0';

describe('the GC window of bench/gc-per-request.ts', () => {
  it('sums allocation, survivors and pauses over the GC lines of the window, per request and per GC', () => {
    const window = gcWindow([scavenge, '{"level":30,"msg":"request completed"}', markCompact, ''].join('\n'), 1000);
    expect(window).toEqual({ requests: 1000, gcs: 2, markCompacts: 1, allocatedPerRequest: 6000, survivedPerGc: 500, pauseMicrosPerRequest: 3 });
  });

  it('reads a window without GC lines as nothing allocated, not as a division by zero', () => {
    expect(gcWindow('no gc here\n', 10)).toEqual({ requests: 10, gcs: 0, markCompacts: 0, allocatedPerRequest: 0, survivedPerGc: 0, pauseMicrosPerRequest: 0 });
  });
});
