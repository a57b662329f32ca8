import { describe, expect, it } from 'vitest';
import { HARD_STOP_COOLDOWN_MAX_MS, HARD_STOP_COOLDOWN_MS, HardStopCooldowns } from '../../../src/code-mode/hard-stop-cooldown.js';

describe('the cooldowns of tenants whose scripts forced a hard stop', () => {
  it('makes a tenant a suspect at its first forced stop, refuses it from the second, doubling up to the maximum', () => {
    const cooldowns = new HardStopCooldowns();
    expect(cooldowns.suspect('a')).toBe(false);
    expect(cooldowns.strike('a')).toBe(0);
    expect(cooldowns.suspect('a')).toBe(true);
    expect(cooldowns.remaining('a')).toBe(0);
    expect(cooldowns.strike('a')).toBe(HARD_STOP_COOLDOWN_MS);
    expect(cooldowns.remaining('a')).toBeGreaterThan(HARD_STOP_COOLDOWN_MS - 1000);
    expect(cooldowns.strike('a')).toBe(2 * HARD_STOP_COOLDOWN_MS);
    for (let i = 0; i < 10; i++) cooldowns.strike('a');
    expect(cooldowns.strike('a')).toBe(HARD_STOP_COOLDOWN_MAX_MS);
    // Another tenant is untouched: nothing about one tenant shows in another's answers.
    expect(cooldowns.suspect('b')).toBe(false);
    expect(cooldowns.remaining('b')).toBe(0);
  });

  it('ends a cooldown when its time is up, and forgets the tenant later', () => {
    let now = 1000;
    const cooldowns = new HardStopCooldowns(() => now);
    cooldowns.strike('a');
    cooldowns.strike('a');
    now += HARD_STOP_COOLDOWN_MS + 1;
    expect(cooldowns.remaining('a')).toBe(0);
    expect(cooldowns.suspect('a')).toBe(true);
    now += HARD_STOP_COOLDOWN_MAX_MS;
    expect(cooldowns.suspect('a')).toBe(false);
    // Forgotten: its next forced stop counts as a first.
    expect(cooldowns.strike('a')).toBe(0);
  });
});
