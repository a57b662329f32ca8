import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createVault, VaultError } from '../../../src/upstream-auth/vault.js';

const key = () => randomBytes(32).toString('base64');

describe('the credential vault', () => {
  it('seals with the first key, names it beside the ciphertext, and never holds the plaintext', () => {
    const vault = createVault({ keys: [{ id: 'k2', key: key() }] });
    const sealed = vault.seal('refresh-token-value', 'acme\u0000alice\u0000jira\u0000refresh');
    expect(sealed.startsWith('v1.k2.')).toBe(true);
    expect(sealed).not.toContain('refresh-token-value');
    expect(Buffer.from(sealed.split('.')[3] ?? '', 'base64url').toString('latin1')).not.toContain('refresh-token-value');
    expect(vault.open(sealed, 'acme\u0000alice\u0000jira\u0000refresh')).toBe('refresh-token-value');
  });

  it('opens what an older key sealed while that key is still configured (rotation)', () => {
    const k1 = key();
    const old = createVault({ keys: [{ id: 'k1', key: k1 }] }).seal('token', 'ctx');
    const rotated = createVault({ keys: [{ id: 'k2', key: key() }, { id: 'k1', key: k1 }] });
    expect(rotated.open(old, 'ctx')).toBe('token');
    expect(rotated.seal('token', 'ctx').startsWith('v1.k2.')).toBe(true);
    expect(() => createVault({ keys: [{ id: 'k2', key: key() }] }).open(old, 'ctx')).toThrow(/no longer configured/);
  });

  it('refuses a ciphertext moved to another user\'s record, or tampered with', () => {
    const vault = createVault({ keys: [{ id: 'k1', key: key() }] });
    const sealed = vault.seal('token', 'acme\u0000alice\u0000jira\u0000access');
    expect(() => vault.open(sealed, 'acme\u0000bob\u0000jira\u0000access')).toThrow(VaultError);
    const parts = sealed.split('.');
    const body = Buffer.from(parts[3] ?? '', 'base64url');
    body[0] = (body[0] ?? 0) ^ 1;
    expect(() => vault.open([parts[0], parts[1], parts[2], body.toString('base64url')].join('.'), 'acme\u0000alice\u0000jira\u0000access')).toThrow(VaultError);
    expect(() => vault.open('plain-token', 'ctx')).toThrow(VaultError);
  });

  it('cannot seal without a key', () => {
    expect(() => createVault({ keys: [] }).seal('token', 'ctx')).toThrow(/no credential key/);
  });
});
