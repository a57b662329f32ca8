import { describe, expect, it, vi } from 'vitest';
import { JsonLineReader } from '../../../../src/mcp/client/json-lines.js';

const drain = (reader: JsonLineReader): unknown[] => {
  const values: unknown[] = [];
  for (let line = reader.next(); line !== undefined; line = reader.next()) values.push(line.value);
  return values;
};

describe('JsonLineReader', () => {
  it('hands on each complete line as parsed JSON and keeps a partial line for the next chunk', () => {
    const reader = new JsonLineReader();
    reader.append(Buffer.from('{"id":1}\n{"id":2}\r\n{"id"'));
    expect(drain(reader)).toEqual([{ id: 1 }, { id: 2 }]);
    reader.append(Buffer.from(':3}\n'));
    expect(drain(reader)).toEqual([{ id: 3 }]);
    expect(reader.next()).toBeUndefined();
  });

  it('skips a line that is not JSON, as the SDK ReadBuffer does, and reads on after it', () => {
    const reader = new JsonLineReader();
    reader.append(Buffer.from('starting up...\n\n{"ok":true}\n'));
    expect(drain(reader)).toEqual([{ ok: true }]);
  });

  it('hands on JSON that is no JSON-RPC message unchanged: the protocol judges it', () => {
    const reader = new JsonLineReader();
    reader.append(Buffer.from('42\n{"jsonrpc":"2.0","id":1,"result":5}\n'));
    expect(drain(reader)).toEqual([42, { jsonrpc: '2.0', id: 1, result: 5 }]);
  });

  it('refuses a chunk that would take the unread bytes past its cap, and drops what it held', () => {
    const reader = new JsonLineReader(16);
    reader.append(Buffer.from('{"a":'));
    expect(() => reader.append(Buffer.from('"0123456789"}\n'))).toThrow(/maximum size of 16 bytes/);
    reader.append(Buffer.from('{"b":1}\n'));
    expect(drain(reader)).toEqual([{ b: 1 }]);
  });
});

describe('JsonLineReader with a line in many chunks', () => {
  it('reads a line that arrived a byte at a time, and the lines after it', () => {
    const reader = new JsonLineReader();
    const text = '{"long":"' + 'x'.repeat(5000) + '"}\n{"next":1}\n';
    const values: unknown[] = [];
    for (const byte of Buffer.from(text)) {
      reader.append(Buffer.from([byte]));
      for (let line = reader.next(); line !== undefined; line = reader.next()) values.push(line.value);
    }
    expect(values).toEqual([{ long: 'x'.repeat(5000) }, { next: 1 }]);
  });

  it('copies a line of many chunks once, when its newline arrives, not once per chunk', () => {
    const reader = new JsonLineReader();
    const concat = vi.spyOn(Buffer, 'concat');
    try {
      reader.append(Buffer.from('{"a":1}'));
      for (let i = 0; i < 2_000; i += 1) {
        reader.append(Buffer.alloc(1024, 0x20)); // whitespace: valid around a JSON value
        expect(reader.next()).toBeUndefined();
      }
      reader.append(Buffer.from('\n'));
      expect(reader.next()).toEqual({ value: { a: 1 } });
      // Joined per chunk, 2,000 chunks of 1 KiB would copy ~2 GiB (the sum of 1..2,000 KiB); joined once, 2 MiB.
      expect(concat).toHaveBeenCalledTimes(1);
    } finally {
      concat.mockRestore();
    }
  });

  it('reads every line when chunks were appended before the lines in them were read', () => {
    const reader = new JsonLineReader();
    reader.append(Buffer.from('{"a":1}\n{"b"'));
    reader.append(Buffer.from(':2}\n{"c":'));
    reader.append(Buffer.from('3}\n'));
    expect(drain(reader)).toEqual([{ a: 1 }, { b: 2 }, { c: 3 }]);
  });
});
