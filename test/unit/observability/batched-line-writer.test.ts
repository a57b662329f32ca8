import { describe, expect, it } from 'vitest';
import { BatchedLineWriter, type BatchedLineWriterOptions } from '../../../src/observability/batched-line-writer.js';

type WriteSyncFn = NonNullable<BatchedLineWriterOptions['writeSync']>;

/** A writeSync that records what it was given and answers with the next scripted outcome (default: all written). */
function scriptedWrites(...outcomes: Array<number | NodeJS.ErrnoException>) {
  const calls: string[] = [];
  const writeSync: WriteSyncFn = (_fd, buffer, offset) => {
    calls.push(buffer.subarray(offset).toString());
    const next = outcomes.shift();
    if (next instanceof Error) throw next;
    return next ?? buffer.length - offset;
  };
  return { calls, writeSync };
}

const errno = (code: string): NodeJS.ErrnoException => Object.assign(new Error(code), { code });
// The writers below wait `maxDelayMs: 1` before a batch goes out: 10 ms later it has.
const FAST = { maxDelayMs: 1 };
const afterBatch = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 10));

describe('BatchedLineWriter', () => {
  it('sends the lines that wait in one write, maxDelayMs after the first of them', async () => {
    const { calls, writeSync } = scriptedWrites();
    const writer = new BatchedLineWriter(9, { writeSync, maxDelayMs: 30 });
    for (let i = 0; i < 100; i += 1) writer.write(`${i}\n`);
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls).toHaveLength(0);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(calls).toEqual([Array.from({ length: 100 }, (_, i) => `${i}\n`).join('')]);
    writer.write('later\n');
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(calls).toEqual([Array.from({ length: 100 }, (_, i) => `${i}\n`).join(''), 'later\n']);
  });

  it('finishes a short write before anything else, and retries a full pipe (EAGAIN) without losing order', async () => {
    const { calls, writeSync } = scriptedWrites(5, errno('EAGAIN'));
    const writer = new BatchedLineWriter(9, { writeSync, retryMs: 30, ...FAST });
    writer.write('hello world\n');
    await afterBatch();
    writer.write('next\n'); // arrives while the rest waits for the pipe
    expect(calls).toEqual(['hello world\n', ' world\n']);
    await writer.flush();
    expect(calls).toEqual(['hello world\n', ' world\n', ' world\n', 'next\n']);
  });

  it('answers a flush at once, without waiting for the delay, even while later lines keep coming', async () => {
    const { calls, writeSync } = scriptedWrites();
    const writer = new BatchedLineWriter(9, { writeSync, maxDelayMs: 60_000 });
    writer.write('1\n');
    let done = false;
    void writer.flush().then(() => (done = true));
    expect(calls).toEqual(['1\n']);
    writer.write('2\n');
    await Promise.resolve();
    expect(done).toBe(true);
    await writer.flush();
    expect(calls).toEqual(['1\n', '2\n']);
  });

  it('counts the lines of a failed write as dropped and goes on with the next lines', async () => {
    const { calls, writeSync } = scriptedWrites(errno('EBADF'));
    const writer = new BatchedLineWriter(9, { writeSync, ...FAST });
    writer.write('lost\n');
    writer.write('lost too\n');
    await writer.flush();
    expect(writer.dropped).toBe(2);
    writer.write('after\n');
    await afterBatch();
    expect(calls).toEqual(['lost\nlost too\n', 'after\n']);
    expect(writer.dropped).toBe(2);
  });

  it('drops and counts lines beyond the backlog bound instead of growing without limit', async () => {
    const { calls, writeSync } = scriptedWrites(errno('EAGAIN'));
    const writer = new BatchedLineWriter(9, { writeSync, maxPendingChars: 10, retryMs: 30, ...FAST });
    expect(writer.write('first\n')).toBe(true);
    await afterBatch(); // the pipe is full: "first" waits as the rest of its batch
    expect(writer.write('12345\n')).toBe(true);
    expect(writer.write('67890\n')).toBe(false);
    expect(writer.dropped).toBe(1);
    await writer.flush();
    expect(calls).toEqual(['first\n', 'first\n', '12345\n']);
  });

  it('writes everything that waits on flushSync (exit), in order, and releases the flushes that waited', async () => {
    const { calls, writeSync } = scriptedWrites(3, errno('EAGAIN'));
    const writer = new BatchedLineWriter(9, { writeSync, retryMs: 1000, ...FAST });
    writer.write('in a full pipe\n');
    await afterBatch(); // 3 bytes out, then the pipe is full: the rest waits for a retry
    writer.write('waiting\n');
    let done = false;
    const flushed = writer.flush().then(() => (done = true));
    writer.flushSync();
    expect(calls).toEqual(['in a full pipe\n', 'a full pipe\n', 'a full pipe\n', 'waiting\n']);
    await flushed;
    expect(done).toBe(true);
  });

  it('gives a pipe that stays full up on flushSync after a bounded wait, counting what it could not write', async () => {
    const full = errno('EAGAIN');
    const writeSync: WriteSyncFn = () => {
      throw full;
    };
    const writer = new BatchedLineWriter(9, { writeSync, retryMs: 60_000, ...FAST });
    writer.write('a\n');
    await afterBatch();
    writer.write('b\n');
    writer.write('c\n');
    const started = Date.now();
    writer.flushSync();
    expect(Date.now() - started).toBeLessThan(5000);
    expect(writer.dropped).toBe(3); // the line left of the first batch and the two behind it
  });
});
