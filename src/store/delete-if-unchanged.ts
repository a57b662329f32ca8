// Compare-and-delete on the store: a record whose last entry went (an emptied index or registration list)
// is removed only while it still holds what its writer read, so a concurrent writer's addition is never
// lost — it either lands first (the delete does nothing, the remover retries) or finds no key and starts it.
import type { StateStore } from './types.js';

/** Deletes `key` only while its value is `expected`; true when deleted. */
export function deleteIfUnchanged(store: StateStore, key: string, expected: string): Promise<boolean> {
  // A lease counted in no group is exactly a record deleted when it still holds its value, in one step.
  return store.releaseLease({ id: '', record: { key, value: expected }, groups: [] });
}
