// A task's record expires after its ttl; its running call's place among the owner's maxPerUser does not:
// it is given back when the run ends (track's done), on a clock that does not move otherwise.
import { describe, expect, it } from 'vitest';
import { createApprovalService } from '../../../src/approvals/service.js';
import { createMemoryBus } from '../../../src/store/bus.js';
import { createMemoryStore } from '../../../src/store/memory.js';
import { createTaskService } from '../../../src/tasks/service.js';
import { TaskError } from '../../../src/tasks/types.js';
import type { Logger } from '../../../src/call/types.js';

const silent = { warn() {}, error() {}, info() {}, debug() {} } as unknown as Logger;
const limits = { defaultTtlMs: 1000, maxTtlMs: 60_000, maxPerUser: 2 };
const owner = { tenant: 'acme', user: 'mallory' };
const input = (n: number) => ({ tool: 'slow', callId: `c${n}`, via: 'mcp' as const, requestId: 'r', ttlMs: 1000 });

describe('the running task calls of one user', () => {
  it('stay counted after their records expire, until each run ends', async () => {
    let t = 1_000_000;
    const store = createMemoryStore({ now: () => t });
    const tasks = createTaskService({ store, bus: createMemoryBus(), approvals: createApprovalService({ store }), audit: { write() {}, flush: async () => {}, close: async () => {} }, log: silent, now: () => t });
    const first = await tasks.create(owner, input(1), limits);
    const second = await tasks.create(owner, input(2), limits);
    const runs = [tasks.track(owner, first.id), tasks.track(owner, second.id)];
    t += 5_000; // both records expired (ttl 1 s); both calls still run
    await expect(tasks.get(owner, first.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    const refused = await tasks.create(owner, input(3), limits).then(() => undefined, (error: unknown) => error);
    expect(refused).toBeInstanceOf(TaskError);
    expect(refused).toMatchObject({ code: 'LIMIT', message: expect.stringContaining('task calls running') });
    runs[0]!.done();
    await new Promise((resolve) => setImmediate(resolve));
    await expect(tasks.create(owner, input(4), limits)).resolves.toMatchObject({ status: 'working' });
    // Another user of the tenant has places of their own.
    await expect(tasks.create({ tenant: 'acme', user: 'trent' }, input(5), limits)).resolves.toMatchObject({ status: 'working' });
    runs[1]!.done();
    tasks.close();
  });
});
