import { describe, expect, it, vi } from 'vitest';
import { SdkCancel } from '../../../src/mcp/sdk-cancel.js';

describe('SdkCancel', () => {
  it('gives the SDK what Protocol.request reads: aborted, reason, throwIfAborted and abort listeners', () => {
    const cancel = new SdkCancel();
    const listener = vi.fn();
    const removed = vi.fn();
    cancel.signal.addEventListener('abort', listener);
    cancel.signal.addEventListener('abort', removed);
    cancel.signal.removeEventListener('abort', removed);
    expect(cancel.signal.aborted).toBe(false);
    expect(() => cancel.signal.throwIfAborted()).not.toThrow();

    const reason = new Error('timed out');
    cancel.abort(reason);
    cancel.abort(new Error('second abort is ignored'));
    expect(listener).toHaveBeenCalledTimes(1);
    expect(removed).not.toHaveBeenCalled();
    expect(cancel.signal.aborted).toBe(true);
    expect(cancel.signal.reason).toBe(reason);
    expect(() => cancel.signal.throwIfAborted()).toThrow(reason);
  });
});
