import { Counter, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { cellCounter } from '../../../src/observability/counter-cells.js';

describe('cellCounter', () => {
  it('exposes exactly what a prom-client Counter exposes for the same increments, on every read', async () => {
    const ours = new Registry();
    const reference = new Registry();
    const { counter, cell } = cellCounter({ name: 'test_total', help: 'test', labelNames: ['a', 'b'] as const, registers: [ours] });
    const plain = new Counter({ name: 'test_total', help: 'test', labelNames: ['a', 'b'] as const, registers: [reference] });
    expect(counter).toBeInstanceOf(Counter);
    expect(await ours.metrics()).toBe(await reference.metrics()); // nothing counted yet
    for (const [a, b] of [['x', 'y'], ['x', 'y'], ['x', 'z'], ['w', 'y']] as const) {
      cell(a, b).inc();
      plain.inc({ a, b });
    }
    expect(await ours.metrics()).toBe(await reference.metrics());
    expect(await ours.metrics()).toContain('test_total{a="x",b="y"} 2');
    cell('x', 'y').inc();
    expect((await counter.get()).values.find((v) => v.labels.a === 'x' && v.labels.b === 'y')?.value).toBe(3);
  });

  it('keeps one cell per label set, and keeps direct increments of the counter', async () => {
    const registry = new Registry();
    const { counter, cell } = cellCounter({ name: 'test_total', help: 'test', labelNames: ['a', 'b'] as const, registers: [registry] });
    expect(cell('x', 'y')).toBe(cell('x', 'y'));
    expect(cell('x', 'y')).not.toBe(cell('x', 'z'));
    cell('x', 'y').inc();
    counter.inc({ a: 'x', b: 'y' });
    expect(await registry.metrics()).toContain('test_total{a="x",b="y"} 2');
  });

  it('shows a looked-up label set at 0 before it is counted, and counts it from there', async () => {
    const registry = new Registry();
    const { cell } = cellCounter({ name: 'test_total', help: 'test', labelNames: ['a'] as const, registers: [registry] });
    cell('known');
    expect(await registry.metrics()).toContain('test_total{a="known"} 0');
    cell('known').inc();
    expect(await registry.metrics()).toContain('test_total{a="known"} 1');
    expect(await registry.metrics()).toContain('test_total{a="known"} 1');
  });

  it('refuses more than three labels', () => {
    expect(() => cellCounter({ name: 't_total', help: 't', labelNames: ['a', 'b', 'c', 'd'], registers: [] })).toThrow(/three/);
  });
});
