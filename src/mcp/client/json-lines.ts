// Newline-delimited JSON from a stdio upstream, framed as the SDK's ReadBuffer frames it (the same size cap, a
// trailing `\r` dropped, a line that is not JSON skipped) but handed on as parsed JSON, without ReadBuffer's
// `deserializeMessage` schema parse. That parse is a second copy of a check the SDK makes anyway: `Protocol`
// classifies every inbound message with its own schema guards (`isJSONRPCResultResponse`, `isJSONRPCRequest`, …,
// also the connect's probe window) and reports anything else through `onerror`, and a response's result is then
// validated against the request's result schema. On /v1/execute → echo over stdio, reading a line fell from
// 6.7 % to 1.6 % of the gateway's busy CPU samples without that parse (bench/results.md, mcp5).
import { STDIO_DEFAULT_MAX_BUFFER_SIZE } from '@modelcontextprotocol/client';

const NEWLINE = 0x0a;

export class JsonLineReader {
  private buffer: Buffer | undefined;

  constructor(private readonly maxBytes: number = STDIO_DEFAULT_MAX_BUFFER_SIZE) {}

  /** Throws when the unread bytes would exceed the cap; the buffer is dropped then, as ReadBuffer drops it. */
  append(chunk: Buffer): void {
    if ((this.buffer?.length ?? 0) + chunk.length > this.maxBytes) {
      this.clear();
      throw new Error(`ReadBuffer exceeded maximum size of ${this.maxBytes} bytes`);
    }
    this.buffer = this.buffer ? Buffer.concat([this.buffer, chunk]) : chunk;
  }

  /** The next complete line's JSON value, or undefined when no complete line is buffered. */
  next(): { value: unknown } | undefined {
    while (this.buffer) {
      const index = this.buffer.indexOf(NEWLINE);
      if (index === -1) return undefined;
      const end = index > 0 && this.buffer[index - 1] === 0x0d ? index - 1 : index;
      const line = this.buffer.toString('utf8', 0, end);
      this.buffer = index + 1 === this.buffer.length ? undefined : this.buffer.subarray(index + 1);
      try {
        return { value: JSON.parse(line) as unknown };
      } catch {
        // Not JSON (a stray log line on stdout): skipped, as ReadBuffer skips it.
      }
    }
    return undefined;
  }

  clear(): void {
    this.buffer = undefined;
  }
}
