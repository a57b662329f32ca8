import { describe, expect, it } from 'vitest';
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
