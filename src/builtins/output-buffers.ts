/**
 * Keeps the first and last `maxBytes / 2` bytes of a stream and counts the rest, so a command printing
 * gigabytes costs at most `maxBytes` of memory and the model still sees how it started and ended.
 */
export class HeadTailBuffer {
  private readonly headLimit: number;
  private readonly tailLimit: number;
  private readonly head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  private total = 0;

  constructor(maxBytes: number) {
    this.headLimit = Math.ceil(maxBytes / 2);
    this.tailLimit = Math.floor(maxBytes / 2);
  }

  push(chunk: Buffer): void {
    this.total += chunk.length;
    if (this.headBytes < this.headLimit) {
      const take = Math.min(chunk.length, this.headLimit - this.headBytes);
      this.head.push(chunk.subarray(0, take));
      this.headBytes += take;
      chunk = chunk.subarray(take);
    }
    if (chunk.length === 0 || this.tailLimit === 0) return;
    // Copy: the kept tail must not pin a large pooled read buffer.
    this.tail.push(Buffer.from(chunk.subarray(Math.max(0, chunk.length - this.tailLimit))));
    this.tailBytes += Math.min(chunk.length, this.tailLimit);
    while (this.tailBytes - this.tail[0]!.length >= this.tailLimit) this.tailBytes -= this.tail.shift()!.length;
  }

  get omittedBytes(): number {
    return this.total - this.headBytes - Math.min(this.tailBytes, this.tailLimit);
  }

  toString(): string {
    const head = Buffer.concat(this.head).toString('utf8');
    let tail = Buffer.concat(this.tail);
    if (tail.length > this.tailLimit) tail = tail.subarray(tail.length - this.tailLimit);
    const omitted = this.omittedBytes;
    return omitted > 0 ? `${head}\n…[${omitted} bytes omitted]…\n${tail.toString('utf8')}` : head + tail.toString('utf8');
  }
}

/** A bounded character log addressed by absolute offsets: old text falls off the front, offsets stay valid. */
export class RingLog {
  private text = '';
  private dropped = 0;

  constructor(private readonly capacity: number) {}

  append(chunk: string): void {
    this.text += chunk;
    if (this.text.length > this.capacity) {
      const cut = this.text.length - this.capacity;
      this.text = this.text.slice(cut);
      this.dropped += cut;
    }
  }

  get length(): number {
    return this.dropped + this.text.length;
  }

  read(offset: number, limit: number): { content: string; offset: number; nextOffset: number; truncated: boolean } {
    const start = Math.min(Math.max(offset, this.dropped), this.length);
    const content = this.text.slice(start - this.dropped, start - this.dropped + limit);
    return { content, offset: start, nextOffset: start + content.length, truncated: offset < this.dropped };
  }
}
