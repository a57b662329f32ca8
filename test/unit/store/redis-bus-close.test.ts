// A bus whose Redis never answers (nothing listens, or a certificate that is not trusted) still closes at
// once: start-up that fails on the store closes the bus before it exits, and must not hang there.
import { describe, expect, it } from 'vitest';
import { createRedisBus } from '../../../src/store/redis-bus.js';
import { freePort } from '../../helpers/server-process.js';

describe('the Redis bus', () => {
  it('closes within a second while its connections are still trying to connect, a subscription pending', async () => {
    const port = await freePort(); // free: nothing listens there
    const bus = createRedisBus({ url: `redis://127.0.0.1:${port}`, prefix: 'close-test:' });
    bus.subscribe('channel', () => undefined);
    const started = Date.now();
    const closed = await Promise.race([bus.close().then(() => 'closed'), new Promise((resolve) => setTimeout(resolve, 1_000, 'still waiting'))]);
    expect(closed).toBe('closed');
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
