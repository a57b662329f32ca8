// Keeps one process.nextTick tick object alive for the life of the process, so V8 never frees its hidden classes
// (docs/operations.md, "nextTick's two states"). nextTick builds each tick object with a literal whose keys after the
// first are stored one by one ({[async_id_symbol]: …, [trigger_async_id_symbol]: …, [async_context_frame]: …,
// callback, args}); V8 records each of those stores for one map and goes straight to megamorphic on any other.
// A full GC while no tick object is alive frees the literal's maps, the next tick object gets new ones, and every
// nextTick costs several times more from then on. One live tick object keeps the maps, and the stores monomorphic.
import { createHook } from 'node:async_hooks';

let kept: object | undefined;

const noop = (): void => {};

/** Catches one tick object (async_hooks' init for a nextTick) and holds it; once per process. */
export function keepTickObjectShape(): void {
  if (kept !== undefined) return;
  const hook = createHook({
    init(_asyncId, type, _triggerAsyncId, resource) {
      if (type === 'TickObject' && kept === undefined) kept = resource;
    },
  });
  hook.enable();
  try {
    process.nextTick(noop);
  } finally {
    hook.disable();
  }
}

/** Whether a tick object is held (tests). */
export function tickObjectKept(): boolean {
  return kept !== undefined;
}

keepTickObjectShape();
