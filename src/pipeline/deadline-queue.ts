import { performance } from 'node:perf_hooks';

/** A deadline waiting in a DeadlineQueue; `cancel` takes it out in O(1) and is safe to call twice. */
export interface Deadline {
  cancel(): void;
}

class Entry implements Deadline {
  prev: Entry | undefined;
  next: Entry | undefined;
  queued = true;

  constructor(
    readonly list: DelayList,
    readonly at: number,
    readonly fire: (early?: unknown) => void,
  ) {}

  cancel(): void {
    if (this.queued) this.list.remove(this);
  }
}

/** The deadlines of one delay, oldest first: added in start order, so their deadlines are in order too. */
class DelayList {
  head: Entry | undefined;
  tail: Entry | undefined;
  timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly queue: DeadlineQueue,
    readonly delayMs: number,
  ) {}

  add(entry: Entry): void {
    entry.prev = this.tail;
    if (this.tail) this.tail.next = entry;
    else this.head = entry;
    this.tail = entry;
  }

  remove(entry: Entry): void {
    entry.queued = false;
    if (entry.prev) entry.prev.next = entry.next;
    else this.head = entry.next;
    if (entry.next) entry.next.prev = entry.prev;
    else this.tail = entry.prev;
    entry.prev = entry.next = undefined;
  }

  /** Arms the list's timer for its head when it has none running. */
  arm(now: number): void {
    if (this.timer !== undefined || !this.head) return;
    this.timer = setTimeout(() => this.expire(), Math.max(1, Math.ceil(this.head.at - now)));
    // Never holds the process open by itself: a pending call is held by whoever waits for it.
    this.timer.unref();
  }

  private expire(): void {
    this.timer = undefined;
    const now = this.queue.now();
    // Node fires timers on its own millisecond clock; a deadline within TOLERANCE_MS of now is due.
    while (this.head && this.head.at <= now + TOLERANCE_MS) fireEntry(this, this.head);
    if (this.head) this.arm(now);
    else this.queue.drop(this);
  }

  /** Fires every entry now, each told `reason` (shutdown); the timer then finds the list empty. */
  expireAll(reason: unknown): void {
    while (this.head) fireEntry(this, this.head, reason);
  }
}

const TOLERANCE_MS = 1;

function fireEntry(list: DelayList, due: Entry, early?: unknown): void {
  list.remove(due);
  try {
    if (early === undefined) due.fire();
    else due.fire(early);
  } catch (error) {
    // As a throwing timer callback would, but the other due deadlines still fire.
    process.nextTick(() => {
      throw error;
    });
  }
}

/**
 * Deadlines for many concurrent calls, without a Node timer per call. A Node timer per call made each
 * call create and tear down a timer list (calls usually finish before the next one starts) and
 * reschedule the event loop's timer; here a call costs one small list entry and an O(1) unlink. Calls
 * of one delay share a FIFO list and one timer, armed for the oldest deadline and re-armed when it
 * fires; a list whose entries are all gone keeps its timer until it fires once, then is dropped, so
 * arbitrary delays (a batch's remaining time) cannot pile up lists.
 */
export class DeadlineQueue {
  private readonly lists = new Map<number, DelayList>();

  constructor(readonly now: () => number = () => performance.now()) {}

  /**
   * Calls `fire` once after `delayMs` (rounded up to a whole ms, at least 1) unless cancelled first, or
   * earlier with the reason `expireAll` was given.
   */
  schedule(delayMs: number, fire: (early?: unknown) => void): Deadline {
    delayMs = Math.max(1, Math.ceil(delayMs));
    let list = this.lists.get(delayMs);
    if (!list) this.lists.set(delayMs, (list = new DelayList(this, delayMs)));
    const now = this.now();
    const entry = new Entry(list, now + delayMs, fire);
    list.add(entry);
    list.arm(now);
    return entry;
  }

  /** Fires every waiting deadline now, with `reason` (a shutdown ends every running call at once). */
  expireAll(reason: unknown): void {
    for (const list of [...this.lists.values()]) list.expireAll(reason);
  }

  /** Lists with a timer armed (for tests: idle delays must not accumulate). */
  get size(): number {
    return this.lists.size;
  }

  /** @internal a list that found itself empty when its timer fired. */
  drop(list: DelayList): void {
    if (this.lists.get(list.delayMs) === list) this.lists.delete(list.delayMs);
  }
}
