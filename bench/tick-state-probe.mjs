// Preloaded into a bench server by bench/tick-state.ts (Node 24, --allow-natives-syntax). On SIGUSR2 it samples what
// decides process.nextTick's "slow state" (bench/results.md, hot5/hot6): whether two tick objects share one map, what
// one nextTick costs here, and `{}`'s map (the root the tick literal's first symbol key transitions from) with its
// transition table, and nextTick's feedback vector. Everything goes through V8's own stdout stream, in order, each sample padded past the stream's
// buffer so it is written out when taken.
import { createHook } from 'node:async_hooks';

const debugPrint = new Function('value', '%DebugPrint(value)');
const haveSameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)');
const hasFastProperties = new Function('value', 'return %HasFastProperties(value)');
const optimizationStatus = new Function('fn', 'return %GetOptimizationStatus(fn)');
const noop = () => {};

function tickObjects() {
  const caught = [];
  const hook = createHook({
    init(_id, type, _trigger, resource) {
      if (type === 'TickObject' && caught.length < 2) caught.push(resource);
    },
  }).enable();
  process.nextTick(noop);
  process.nextTick(noop);
  hook.disable();
  return caught;
}

/** Nanoseconds per process.nextTick call: the fastest of 5 batches of 2,000 (the machine is shared). */
function nextTickCost() {
  let best = Infinity;
  for (let batch = 0; batch < 5; batch += 1) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < 2000; i += 1) process.nextTick(noop);
    best = Math.min(best, Number(process.hrtime.bigint() - start) / 2000);
  }
  return best;
}

let samples = 0;
process.on('SIGUSR2', () => {
  samples += 1;
  const [a, b] = tickObjects();
  const result = { sample: samples, sameMap: haveSameMap(a, b), fast: hasFastProperties(a), nsPerTick: Math.round(nextTickCost()), nextTickStatus: optimizationStatus(process.nextTick) };
  debugPrint(`TICKPROBE ${JSON.stringify(result)}`);
  debugPrint({});
  // nextTick's feedback: the IC states of the tick literal's computed-key stores (DefineKeyedOwnPropertyInLiteral).
  debugPrint(process.nextTick);
  if (process.env.TICK_STATE_PRINT_TICK) debugPrint(a);
  debugPrint(`TICKPROBE-END${'.'.repeat(16384)}`);
});
