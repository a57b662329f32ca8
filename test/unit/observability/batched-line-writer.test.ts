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
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('BatchedLineWriter', () => {
  it('sends the lines of one event-loop turn in one write, after the turn', async () => {
    const { calls, writeSync } = scriptedWrites();
    const writer = new BatchedLineWriter(9, { writeSync });
    for (let i = 0; i < 100; i += 1) writer.write(`${i}\n`);
    expect(calls).toHaveLength(0);
    await nextTurn();
    expect(calls).toEqual([Array.from({ length: 100 }, (_, i) => `${i}\n`).join('')]);
  });

  it('finishes a short write before anything else, and retries a full pipe (EAGAIN) without losing order', async () => {
    const { calls, writeSync } = scriptedWrites(5, errno('EAGAIN'));
    const writer = new BatchedLineWriter(9, { writeSync, retryMs: 1 });
    writer.write('hello world\n');
    await nextTurn();
    writer.write('next\n'); // arrives while the rest waits for the pipe
    expect(calls).toEqual(['hello world\n', ' world\n']);
    await writer.flush();
    expect(calls).toEqual(['hello world\n', ' world\n', ' world\n', 'next\n']);
  });

  it('answers a flush within the turn it was asked in, even while later lines keep coming', async () => {
    const { calls, writeSync } = scriptedWrites();
    const writer = new BatchedLineWriter(9, { writeSync });
    writer.write('1\n');
    let done = false;
    void writer.flush().then(() => (done = true));
    writer.write('2\n');
    await nextTurn();
    await Promise.resolve();
    expect(done).toBe(true);
    writer.write('3\n');
    await nextTurn();
    expect(calls).toEqual(['1\n2\n', '3\n']);
  });

  it('counts the lines of a failed write as dropped and goes on with the next lines', async () => {
    const { calls, writeSync } = scriptedWrites(errno('EBADF'));
    const writer = new BatchedLineWriter(9, { writeSync });
    writer.write('lost\n');
    writer.write('lost too\n');
    await writer.flush();
    expect(writer.dropped).toBe(2);
    writer.write('after\n');
    await nextTurn();
    expect(calls).toEqual(['lost\nlost too\n', 'after\n']);
    expect(writer.dropped).toBe(2);
  });

  it('drops and counts lines beyond the backlog bound instead of growing without limit', async () => {
    const { calls, writeSync } = scriptedWrites(errno('EAGAIN'));
    const writer = new BatchedLineWriter(9, { writeSync, maxPendingChars: 10, retryMs: 1 });
    expect(writer.write('first\n')).toBe(true);
    await nextTurn(); // the pipe is full: "first" waits as the rest of its batch
    expect(writer.write('12345\n')).toBe(true);
    expect(writer.write('67890\n')).toBe(false);
    expect(writer.dropped).toBe(1);
    await writer.flush();
    expect(calls).toEqual(['first\n', 'first\n', '12345\n']);
  });

  it('writes everything that waits on flushSync (exit), in order, and releases the flushes that waited', async () => {
    const { calls, writeSync } = scriptedWrites(3, errno('EAGAIN'));
    const writer = new BatchedLineWriter(9, { writeSync, retryMs: 1000 });
    writer.write('in a full pipe\n');
    await nextTurn(); // 3 bytes out, then the pipe is full: the rest waits for a retry
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
    const writer = new BatchedLineWriter(9, { writeSync, retryMs: 60_000 });
    writer.write('a\n');
    await nextTurn();
    writer.write('b\n');
    writer.write('c\n');
    const started = Date.now();
    writer.flushSync();
    expect(Date.now() - started).toBeLessThan(5000);
    expect(writer.dropped).toBe(3); // the line left of the first batch and the two behind it
  });
});
