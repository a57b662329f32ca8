import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFileAuditSink } from '../../../src/audit/file-sink.js';
import { createAuditSink, createDestinationAuditSink } from '../../../src/audit/sinks.js';
import type { AuditEvent, CallAuditEvent } from '../../../src/audit/types.js';
import pino from 'pino';

const dir = await mkdtemp(join(tmpdir(), 'tg-audit-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

const event = (i: number): CallAuditEvent => ({
  event: 'call',
  time: 1_700_000_000_000 + i,
  requestId: `r${i}`,
  callId: `c${i}`,
  tenant: 'acme',
  user: 'alice',
  tool: 'lookup',
  source: 'function',
  argsSha256: 'x',
  outcome: 'ok',
  errorType: null,
  durationMs: 1,
  approvalId: null,
});

describe('file audit sink', () => {
  it('writes every event as one JSON line, in order, by close time', async () => {
    const path = join(dir, 'order.log');
    const sink = createFileAuditSink(path);
    for (let i = 0; i < 500; i++) sink.write(event(i));
    await sink.close();
    const lines = (await readFile(path, 'utf8')).trim().split('\n');
    expect(lines).toHaveLength(500);
    expect(lines.map((l) => (JSON.parse(l) as CallAuditEvent).callId)).toEqual(Array.from({ length: 500 }, (_, i) => `c${i}`));
  });

  it('flushes on demand and keeps events written after close', async () => {
    const path = join(dir, 'late.log');
    const sink = createFileAuditSink(path);
    sink.write(event(1));
    await sink.flush();
    expect((await readFile(path, 'utf8')).split('\n').filter(Boolean)).toHaveLength(1);
    await sink.close();
    sink.write(event(2));
    expect((await readFile(path, 'utf8')).split('\n').filter(Boolean)).toHaveLength(2);
  });

  it('appends on its own once the interval is up, without a flush', async () => {
    const path = join(dir, 'interval.log');
    const sink = createFileAuditSink(path, { flushIntervalMs: 20 });
    sink.write(event(1));
    sink.write(event(2));
    await expect.poll(async () => (await readFile(path, 'utf8').catch(() => '')).split('\n').filter(Boolean).length, { timeout: 2000 }).toBe(2);
    await sink.close();
  });

  it('appends at once when the queued bytes pass the threshold, before the interval', async () => {
    const path = join(dir, 'bytes.log');
    // An interval far beyond the test's timeout: only the size trigger can write these.
    const sink = createFileAuditSink(path, { flushIntervalMs: 3_600_000, flushBytes: 1024 });
    for (let i = 0; i < 20; i++) sink.write(event(i));
    await expect.poll(async () => (await readFile(path, 'utf8').catch(() => '')).length, { timeout: 2000 }).toBeGreaterThanOrEqual(1024);
    await sink.close();
    expect((await readFile(path, 'utf8')).trim().split('\n')).toHaveLength(20);
  });

  it('reports a write failure without throwing into the call', async () => {
    const failures: unknown[] = [];
    const sink = createFileAuditSink(join(dir, 'missing-dir', 'a.log'), { onError: (e) => failures.push(e) });
    expect(() => sink.write(event(1))).not.toThrow();
    await sink.flush();
    expect(failures).toHaveLength(1);
  });
});

describe('audit line shape', () => {
  // What pino writes for a log line: the audit line must read like one to log tooling (pino-pretty, Loki).
  const pinoLine = (): Record<string, unknown> => {
    const lines: string[] = [];
    pino({}, { write: (line: string) => lines.push(line) }).info({ some: 'field' }, 'a log line');
    return JSON.parse(lines[0]!) as Record<string, unknown>;
  };

  it.each(['file', 'stdout'] as const)('writes pino-shaped lines on the %s sink: level, epoch-ms time, pid, hostname, the event, msg "audit"', async (kind) => {
    const lines: string[] = [];
    const path = join(dir, `shape-${kind}.log`);
    const sink = kind === 'file' ? createFileAuditSink(path) : createDestinationAuditSink({ write: (line) => lines.push(line), flush: async () => {} });
    sink.write(event(7));
    await sink.close();
    const raw = kind === 'file' ? (await readFile(path, 'utf8')).trim() : lines[0]!.trim();
    const line = JSON.parse(raw) as Record<string, unknown>;
    const log = pinoLine();
    expect(Object.keys(line).slice(0, 4)).toEqual(Object.keys(log).slice(0, 4));
    expect(Object.keys(line).at(-1)).toBe(Object.keys(log).at(-1));
    expect(line).toMatchObject({ level: 30, time: 1_700_000_000_007, pid: log.pid, hostname: log.hostname, msg: 'audit' });
    expect(typeof log.time).toBe('number');
    const { level: _level, pid: _pid, hostname: _hostname, msg: _msg, ...fields } = line;
    expect(fields).toEqual(event(7));
  });
});

describe('destination and off sinks', () => {
  it('writes JSON lines to a shared line destination without waiting, and flushes through it', async () => {
    const lines: string[] = [];
    let flushes = 0;
    const sink = createDestinationAuditSink({
      write: (line) => lines.push(line),
      flush: async () => {
        flushes += 1;
      },
    });
    sink.write(event(3));
    sink.write(event(4));
    await sink.close();
    expect(lines.map((line) => (JSON.parse(line) as CallAuditEvent).callId)).toEqual(['c3', 'c4']);
    expect(lines.every((line) => line.endsWith('\n'))).toBe(true);
    expect(flushes).toBe(1);
  });

  it('discards everything when off', async () => {
    const sink = createAuditSink({ sink: 'off' });
    expect(sink.write(event(1))).toBeUndefined();
    await expect(sink.close()).resolves.toBeUndefined();
  });
});
