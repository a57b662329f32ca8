import { describe, expect, it } from 'vitest';
import { randomId } from '../../src/http/random-id.js';

describe('randomId', () => {
  it('gives base64url ids of the requested size, all distinct across pool refills', () => {
    const ids = new Set<string>();
    for (let i = 0; i < 2000; i += 1) ids.add(randomId(12));
    expect(ids.size).toBe(2000);
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]{16}$/);
  });
});
