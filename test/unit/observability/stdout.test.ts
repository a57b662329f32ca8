import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { BatchedLineWriter } from '../../../src/observability/batched-line-writer.js';

const fixture = (name: string): string => fileURLToPath(new URL(`../../fixtures/observability/${name}`, import.meta.url));
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('the stdout line destination', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('writes every line in order, and flush resolves once they are out', async () => {
    dir = mkdtempSync(join(tmpdir(), 'line-destination-'));
    const path = join(dir, 'out.log');
    const destination = new BatchedLineWriter(path);
    const expected: string[] = [];
    for (let i = 0; i < 2000; i += 1) {
      const line = `{"n":${i},"text":"é ✓ ${'x'.repeat(i % 50)}"}\n`;
      expected.push(line);
      destination.write(line);
      if (i % 300 === 0) await nextTurn();
    }
    await destination.flush();
    expect(readFileSync(path, 'utf8')).toBe(expected.join(''));
    destination.close();
  });

  it('writes a lone line soon, without waiting for a batch to fill', async () => {
    dir = mkdtempSync(join(tmpdir(), 'line-destination-'));
    const path = join(dir, 'out.log');
    const destination = new BatchedLineWriter(path);
    destination.write('{"alone":true}\n');
    const until = Date.now() + 5000;
    while (readFileSync(path, 'utf8') === '' && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(readFileSync(path, 'utf8')).toBe('{"alone":true}\n');
    destination.close();
  });

  it('is a pino destination: a logger writes its JSON lines through it', async () => {
    dir = mkdtempSync(join(tmpdir(), 'line-destination-'));
    const path = join(dir, 'out.log');
    const destination = new BatchedLineWriter(path);
    const logger = pino({ base: undefined, timestamp: false }, destination);
    logger.info({ tool: 'echo' }, 'request completed');
    logger.warn('second');
    await destination.flush();
    const lines = readFileSync(path, 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line) as { msg: string });
    expect(lines.map((line) => line.msg)).toEqual(['request completed', 'second']);
    destination.close();
  });

  it('drops and counts lines beyond the backlog bound instead of growing without limit', async () => {
    dir = mkdtempSync(join(tmpdir(), 'line-destination-'));
    const path = join(dir, 'out.log');
    const destination = new BatchedLineWriter(path, { maxPendingChars: 1000 });
    const line = `${'x'.repeat(99)}\n`;
    for (let i = 0; i < 100; i += 1) destination.write(line); // one turn: nothing has been written yet
    expect(destination.dropped).toBe(90);
    await destination.flush();
    expect(readFileSync(path, 'utf8')).toBe(line.repeat(10));
    destination.close();
  });

  it('counts the lines stdout dropped in toolgate_log_lines_dropped_total', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', fixture('stdout-drops.ts')], { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
    expect(run.status).toBe(0);
    const dropped = Number(/^toolgate_log_lines_dropped_total (\d+)$/m.exec(run.stderr)?.[1]);
    // 70,000 lines of 1,011 characters against 64 Mi that may wait: about 3,600 cannot wait.
    expect(dropped).toBeGreaterThan(3000);
    expect(dropped).toBeLessThan(4000);
  });

  it('gets every line of a process that exits at once out on stdout, in order, to a file and to a pipe', () => {
    const script = fixture('stdout-lines.ts');
    const numbersIn = (text: string) => text.trimEnd().split('\n').map((line) => (JSON.parse(line) as { n: number }).n);
    const inOrder = (numbers: number[]) => numbers.length === 20000 && numbers.every((n, i) => n === i);

    dir = mkdtempSync(join(tmpdir(), 'line-destination-'));
    const path = join(dir, 'stdout.log');
    const fd = openSync(path, 'w');
    const toFile = spawnSync(process.execPath, ['--import', 'tsx', script, '20000'], { stdio: ['ignore', fd, 'pipe'] });
    closeSync(fd);
    expect(toFile.status).toBe(0);
    expect(inOrder(numbersIn(readFileSync(path, 'utf8')))).toBe(true);

    for (const mode of ['at-once', 'flush']) {
      const toPipe = spawnSync(process.execPath, ['--import', 'tsx', script, '20000', mode], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
      expect(toPipe.status, mode).toBe(0);
      expect(inOrder(numbersIn(toPipe.stdout)), mode).toBe(true);
    }
  });
});
