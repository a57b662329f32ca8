// The tests that measure another tenant's answers while they attack the gateway run in their own project,
// after the rest of the suite and one file at a time (vitest.config.ts, UNDER_ATTACK): their "within 1 s"
// must measure the gateway under its attack, not a neighbour file's load on the same two cores.
import { readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { createVitest } from 'vitest/node';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/config/demo.js';
import { UNDER_ATTACK } from '../../vitest.config.js';

const root = packageRoot();
const usesVictimHelpers = /from '(?:\.\.\/)+helpers\/(?:liveness|victim-tenant)\.js'/;

describe('the tests under attack', () => {
  it('run alone after the rest, and every file measuring a victim with the helpers is among them', async () => {
    const vitest = await createVitest('test', { root, config: join(root, 'vitest.config.ts'), watch: false });
    let byProject: Map<string, string[]>;
    let settings: Array<{ name: string; maxWorkers: number; groupOrder: number; isolate: boolean }>;
    try {
      byProject = new Map();
      for (const specification of await vitest.globTestSpecifications()) {
        const name = specification.project.name;
        byProject.set(name, [...(byProject.get(name) ?? []), relative(root, specification.moduleId)]);
      }
      settings = vitest.projects.map((project) => ({ name: project.name, maxWorkers: project.config.maxWorkers, groupOrder: project.config.sequence.groupOrder, isolate: project.config.isolate }));
    } finally {
      await vitest.close();
    }
    const suite = byProject.get('suite') ?? [];
    const underAttack = (byProject.get('under-attack') ?? []).sort();
    expect(underAttack).toEqual([...UNDER_ATTACK].sort());
    expect(suite.filter((file) => underAttack.includes(file))).toEqual([]);
    const unlisted: string[] = [];
    for (const file of suite) if (usesVictimHelpers.test(await readFile(join(root, file), 'utf8'))) unlisted.push(file);
    expect(unlisted).toEqual([]);

    const [main, alone] = [settings.find((project) => project.name === 'suite')!, settings.find((project) => project.name === 'under-attack')!];
    expect(alone.maxWorkers).toBe(1);
    expect(alone.groupOrder).toBeGreaterThan(main.groupOrder);
    expect(main.maxWorkers).toBe(2);
  });
});
