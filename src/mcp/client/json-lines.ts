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
  /** Unread bytes; no part but the last holds a newline, so a long line arriving in many chunks is joined once. */
  private parts: Buffer[] = [];
  private held = 0;
  /** Where the first newline of the last part is, or -1. */
  private newlineInLast = -1;

  constructor(private readonly maxBytes: number = STDIO_DEFAULT_MAX_BUFFER_SIZE) {}

  /** Throws when the unread bytes would exceed the cap; the buffer is dropped then, as ReadBuffer drops it. */
  append(chunk: Buffer): void {
    if (this.held + chunk.length > this.maxBytes) {
      this.clear();
      throw new Error(`ReadBuffer exceeded maximum size of ${this.maxBytes} bytes`);
    }
    this.held += chunk.length;
    if (this.newlineInLast !== -1) {
      // Lines not read yet (the caller appended before draining): joined, so no earlier part holds a newline.
      const joined = Buffer.concat([...this.parts, chunk], this.held);
      this.parts = [joined];
      this.newlineInLast = joined.indexOf(NEWLINE);
      return;
    }
    this.parts.push(chunk);
    this.newlineInLast = chunk.indexOf(NEWLINE);
  }

  /** The next complete line's JSON value, or undefined when no complete line is buffered. */
  next(): { value: unknown } | undefined {
    while (this.newlineInLast !== -1) {
      const last = this.parts[this.parts.length - 1]!;
      const buffer = this.parts.length === 1 ? last : Buffer.concat(this.parts, this.held);
      const index = this.held - last.length + this.newlineInLast;
      const end = index > 0 && buffer[index - 1] === 0x0d ? index - 1 : index;
      const line = buffer.toString('utf8', 0, end);
      const rest = buffer.subarray(index + 1);
      this.parts = rest.length === 0 ? [] : [rest];
      this.held = rest.length;
      this.newlineInLast = rest.indexOf(NEWLINE);
      try {
        return { value: JSON.parse(line) as unknown };
      } catch {
        // Not JSON (a stray log line on stdout): skipped, as ReadBuffer skips it.
      }
    }
    return undefined;
  }

  clear(): void {
    this.parts = [];
    this.held = 0;
    this.newlineInLast = -1;
  }
}
