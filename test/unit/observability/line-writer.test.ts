import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { LineWriter, type LineWriterOptions } from '../../../src/observability/line-writer.js';

type WriteSyncFn = NonNullable<LineWriterOptions['writeSync']>;

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
const flushed = (writer: LineWriter): Promise<Error | undefined> => new Promise((resolve) => writer.flush(resolve));

describe('LineWriter', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('writes every line to the file in order, and flush resolves once they are out', async () => {
    dir = mkdtempSync(join(tmpdir(), 'line-writer-'));
    const path = join(dir, 'out.log');
    const fd = openSync(path, 'w');
    const writer = new LineWriter(fd);
    const expected: string[] = [];
    for (let i = 0; i < 2000; i += 1) {
      const line = `{"n":${i},"text":"é ✓ ${'x'.repeat(i % 50)}"}\n`;
      expected.push(line);
      writer.write(line);
      if (i % 300 === 0) await nextTurn();
    }
    expect(await flushed(writer)).toBeUndefined();
    closeSync(fd);
    expect(readFileSync(path, 'utf8')).toBe(expected.join(''));
  });

  it('sends the lines of one event-loop turn in one write, after the turn', async () => {
    const { calls, writeSync } = scriptedWrites();
    const writer = new LineWriter(9, { writeSync });
    for (let i = 0; i < 100; i += 1) writer.write(`${i}\n`);
    expect(calls).toHaveLength(0);
    await nextTurn();
    expect(calls).toEqual([Array.from({ length: 100 }, (_, i) => `${i}\n`).join('')]);
  });

  it('finishes a short write before anything else, and retries a full pipe (EAGAIN) without losing order', async () => {
    const { calls, writeSync } = scriptedWrites(5, errno('EAGAIN'));
    const writer = new LineWriter(9, { writeSync, retryMs: 1 });
    writer.write('hello world\n');
    await nextTurn();
    writer.write('next\n'); // arrives while the rest waits for the pipe
    expect(calls).toEqual(['hello world\n', ' world\n']);
    expect(await flushed(writer)).toBeUndefined();
    expect(calls).toEqual(['hello world\n', ' world\n', ' world\n', 'next\n']);
  });

  it('answers a flush within the turn it was asked in, even while later lines keep coming', async () => {
    const { calls, writeSync } = scriptedWrites();
    const writer = new LineWriter(9, { writeSync });
    writer.write('1\n');
    let done = false;
    writer.flush(() => (done = true));
    writer.write('2\n');
    await nextTurn();
    expect(done).toBe(true);
    writer.write('3\n');
    await nextTurn();
    expect(calls).toEqual(['1\n2\n', '3\n']);
  });

  it('reports a failed write to flush and goes on with the next lines', async () => {
    const { calls, writeSync } = scriptedWrites(errno('EBADF'));
    const writer = new LineWriter(9, { writeSync });
    writer.write('lost\n');
    expect((await flushed(writer))?.message).toBe('EBADF');
    writer.write('after\n');
    await nextTurn();
    expect(calls).toEqual(['lost\n', 'after\n']);
  });

  it('drops and counts lines beyond the backlog bound instead of growing without limit', async () => {
    const { calls, writeSync } = scriptedWrites(errno('EAGAIN'));
    const writer = new LineWriter(9, { writeSync, maxPendingChars: 10, retryMs: 1 });
    expect(writer.write('first\n')).toBe(true);
    await nextTurn(); // the pipe is full: "first" waits as the rest of its batch
    expect(writer.write('12345\n')).toBe(true);
    expect(writer.write('67890\n')).toBe(false);
    expect(writer.dropped).toBe(1);
    await flushed(writer);
    expect(calls).toEqual(['first\n', 'first\n', '12345\n']);
  });

  it('writes everything that waits on flushSync (exit), in order, and releases the flushes that waited', async () => {
    const { calls, writeSync } = scriptedWrites(3, errno('EAGAIN'));
    const writer = new LineWriter(9, { writeSync, retryMs: 1000 });
    writer.write('in a full pipe\n');
    await nextTurn(); // 3 bytes out, then the pipe is full: the rest waits for a retry
    writer.write('waiting\n');
    let done = false;
    writer.flush(() => (done = true));
    writer.flushSync();
    expect(calls).toEqual(['in a full pipe\n', 'a full pipe\n', 'a full pipe\n', 'waiting\n']);
    expect(done).toBe(true);
  });

  it('gets every line of a process that exits at once out on stdout, in order, to a file and to a pipe', () => {
    const script = fileURLToPath(new URL('../../fixtures/observability/stdout-lines.ts', import.meta.url));
    const numbersIn = (text: string) => text.trimEnd().split('\n').map((line) => (JSON.parse(line) as { n: number }).n);
    const inOrder = (numbers: number[]) => numbers.length === 20000 && numbers.every((n, i) => n === i);

    dir = mkdtempSync(join(tmpdir(), 'line-writer-'));
    const path = join(dir, 'stdout.log');
    const fd = openSync(path, 'w');
    const toFile = spawnSync(process.execPath, ['--import', 'tsx', script, '20000'], { stdio: ['ignore', fd, 'pipe'] });
    closeSync(fd);
    expect(toFile.status).toBe(0);
    expect(inOrder(numbersIn(readFileSync(path, 'utf8')))).toBe(true);

    const toPipe = spawnSync(process.execPath, ['--import', 'tsx', script, '20000'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    expect(toPipe.status).toBe(0);
    expect(inOrder(numbersIn(toPipe.stdout))).toBe(true);
  });
});
