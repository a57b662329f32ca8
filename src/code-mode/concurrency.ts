/**
 * The concurrency classes of a batch (docs/architecture.md#batch) for calls that arrive one by one from a
 * script: concurrency-safe calls share the gate, at most `maxParallel` at once; an unsafe call waits for
 * everything before it and runs alone. First come, first served, so an unsafe call is never starved.
 */
export class ConcurrencyGate {
  private running = 0;
  private exclusive = false;
  private readonly waiting: Array<{ safe: boolean; start: () => void }> = [];

  constructor(private readonly maxParallel: number) {}

  async run<T>(safe: boolean, work: () => Promise<T>): Promise<T> {
    await new Promise<void>((start) => {
      this.waiting.push({ safe, start });
      this.pump();
    });
    try {
      return await work();
    } finally {
      this.running -= 1;
      this.exclusive = false;
      this.pump();
    }
  }

  private pump(): void {
    for (;;) {
      const next = this.waiting[0];
      if (!next || this.exclusive) return;
      if (next.safe ? this.running >= this.maxParallel : this.running > 0) return;
      this.waiting.shift();
      this.running += 1;
      this.exclusive = !next.safe;
      next.start();
    }
  }
}
