import { Counter, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { deferredCounter } from '../../../src/observability/deferred-counter.js';

function newCounter() {
  const registry = new Registry();
  const counter = new Counter({ name: 'test_total', help: 'test', labelNames: ['a', 'b'] as const, registers: [registry] });
  return { registry, counter };
}

describe('deferredCounter', () => {
  it('hands pending counts to the counter when the metric is read', async () => {
    const { registry, counter } = newCounter();
    const cell = deferredCounter(counter, ['a', 'b']);
    cell('x', 'y').inc();
    cell('x', 'y').inc();
    cell('x', 'z').inc();
    const text = await registry.metrics();
    expect(text).toContain('test_total{a="x",b="y"} 2');
    expect(text).toContain('test_total{a="x",b="z"} 1');
    cell('x', 'y').inc();
    const values = (await counter.get()).values;
    expect(values.find((v) => v.labels.b === 'y')?.value).toBe(3);
  });

  it('counts two deferrals of one counter together and keeps direct increments', async () => {
    const { counter } = newCounter();
    deferredCounter(counter, ['a', 'b'])('x', 'y').inc();
    deferredCounter(counter, ['a', 'b'])('x', 'y').inc();
    counter.inc({ a: 'x', b: 'y' });
    expect((await counter.get()).values[0]?.value).toBe(3);
  });

  it('drops pending counts on reset', async () => {
    const { counter } = newCounter();
    const cell = deferredCounter(counter, ['a', 'b']);
    cell('x', 'y').inc();
    counter.reset();
    cell('x', 'y').inc();
    expect((await counter.get()).values.find((v) => v.labels.a === 'x')?.value).toBe(1);
  });
});
