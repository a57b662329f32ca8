import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { LineWriter, type LineWriterOptions } from '../../../src/observability/line-writer.js';

type WriteFn = NonNullable<LineWriterOptions['write']>;
type Pending = { chunk: string; offset: number; finish: (error: NodeJS.ErrnoException | null, written: number) => void };

/** A write function whose calls complete only when the test says so. */
function manualWrites() {
  const calls: Pending[] = [];
  const write: WriteFn = (_fd, buffer, offset, length, _position, callback) => {
    calls.push({ chunk: buffer.subarray(offset, offset + length).toString(), offset, finish: callback });
  };
  return { calls, write };
}

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
      if (i % 300 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await flushed(writer)).toBeUndefined();
    closeSync(fd);
    expect(readFileSync(path, 'utf8')).toBe(expected.join(''));
  });

  it('keeps one write in flight and sends the lines that waited meanwhile as one chunk', () => {
    const { calls, write } = manualWrites();
    const writer = new LineWriter(9, { write });
    writer.write('a\n');
    for (let i = 0; i < 100; i += 1) writer.write(`${i}\n`);
    expect(calls.map((call) => call.chunk)).toEqual(['a\n']);
    calls[0]!.finish(null, 2);
    expect(calls).toHaveLength(2);
    expect(calls[1]!.chunk).toBe(Array.from({ length: 100 }, (_, i) => `${i}\n`).join(''));
  });

  it('finishes a partial write before anything else, and retries a full pipe (EAGAIN)', async () => {
    const { calls, write } = manualWrites();
    const writer = new LineWriter(9, { write, retryMs: 1 });
    writer.write('hello world\n');
    writer.write('next\n');
    calls[0]!.finish(null, 5);
    expect(calls[1]).toMatchObject({ chunk: ' world\n', offset: 5 });
    calls[1]!.finish(Object.assign(new Error('again'), { code: 'EAGAIN' }), 0);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(calls[2]).toMatchObject({ chunk: ' world\n', offset: 5 });
    calls[2]!.finish(null, 7);
    expect(calls[3]!.chunk).toBe('next\n');
  });

  it('answers a flush for the lines before it, even while later lines keep coming', () => {
    const { calls, write } = manualWrites();
    const writer = new LineWriter(9, { write });
    writer.write('1\n');
    writer.write('2\n');
    let done = false;
    writer.flush(() => (done = true));
    writer.write('3\n'); // joins the batch of "2": the flush waits for that batch, not for everything ever written
    calls[0]!.finish(null, 2);
    expect(done).toBe(false);
    writer.write('4\n');
    calls[1]!.finish(null, calls[1]!.chunk.length);
    expect(done).toBe(true);
    expect(calls[2]!.chunk).toBe('4\n');
  });

  it('reports a failed write to flush and goes on with the next lines', async () => {
    const { calls, write } = manualWrites();
    const writer = new LineWriter(9, { write });
    writer.write('lost\n');
    const result = flushed(writer);
    calls[0]!.finish(Object.assign(new Error('bad fd'), { code: 'EBADF' }), 0);
    expect((await result)?.message).toBe('bad fd');
    writer.write('after\n');
    expect(calls[1]!.chunk).toBe('after\n');
  });

  it('drops and counts lines beyond the backlog bound instead of growing without limit', () => {
    const { calls, write } = manualWrites();
    const writer = new LineWriter(9, { write, maxPendingChars: 10 });
    expect(writer.write('first\n')).toBe(true); // goes straight to the write in flight
    expect(writer.write('12345\n')).toBe(true);
    expect(writer.write('67890\n')).toBe(false);
    expect(writer.dropped).toBe(1);
    calls[0]!.finish(null, 6);
    expect(calls[1]!.chunk).toBe('12345\n');
  });

  it('writes what waits synchronously on flushSync (exit), and releases the flushes that waited for it', () => {
    const { calls, write } = manualWrites();
    const synced: string[] = [];
    const writer = new LineWriter(9, { write, writeSync: (_fd, buffer, offset) => (synced.push(buffer.subarray(offset).toString()), buffer.length - offset) });
    writer.write('in flight\n');
    writer.write('waiting\n');
    let done = false;
    writer.flush(() => (done = true));
    writer.flushSync();
    expect(synced).toEqual(['waiting\n']);
    expect(done).toBe(false); // the chunk in flight is not out yet
    calls[0]!.finish(null, 10);
    expect(done).toBe(true);
    expect(calls).toHaveLength(1);
  });

  // stdout is a file here, not a pipe: through a pipe whose reader falls behind (a loaded CI machine), the
  // batch still in flight in the thread pool at exit is blocked, and it is lost or lands after the lines
  // the exit flush writes. That limitation is the writer's, documented at flushSync; this test pins the rest.
  it('gets every line of a process that exits at once out on stdout, in order', () => {
    dir = mkdtempSync(join(tmpdir(), 'line-writer-'));
    const path = join(dir, 'stdout.log');
    const fd = openSync(path, 'w');
    const script = fileURLToPath(new URL('../../fixtures/observability/stdout-lines.ts', import.meta.url));
    const child = spawnSync(process.execPath, ['--import', 'tsx', script, '20000'], { stdio: ['ignore', fd, 'pipe'], encoding: 'utf8' });
    closeSync(fd);
    expect(child.status).toBe(0);
    const numbers = readFileSync(path, 'utf8').trimEnd().split('\n').map((line) => (JSON.parse(line) as { n: number }).n);
    expect(numbers).toHaveLength(20000);
    expect(numbers.every((n, i) => n === i)).toBe(true);
  });
});
