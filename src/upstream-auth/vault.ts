// The credential vault (docs/security-model.md#upstream-identity): upstream tokens at rest are AES-256-GCM
// ciphertexts, each carrying the id of the key that sealed it. The first configured key seals; every key
// opens, so keys rotate by putting a new one first and retiring the old once nothing sealed with it is left.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { CredentialsConfig } from '../config/types.js';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class VaultError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'VaultError';
  }
}

export interface Vault {
  /**
   * `v1.<key id>.<iv>.<ciphertext+tag>` (base64url). `context` (tenant, user, service) is authenticated
   * data: a ciphertext copied under another user's record does not open there.
   */
  seal(plaintext: string, context: string): string;
  open(sealed: string, context: string): string;
  /** Whether the vault has a key to seal with. */
  readonly ready: boolean;
}

export function createVault(config: CredentialsConfig): Vault {
  const keys = new Map(config.keys.map(({ id, key }) => [id, Buffer.from(key, 'base64')]));
  const first = config.keys[0];
  return {
    ready: first !== undefined,
    seal(plaintext, context) {
      if (!first) throw new VaultError('no credential key is configured (credentials.keys)');
      const key = keys.get(first.id) as Buffer;
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(Buffer.from(context));
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
      return [VERSION, first.id, iv.toString('base64url'), body.toString('base64url')].join('.');
    },
    open(sealed, context) {
      const [version, keyId, iv, body, extra] = sealed.split('.');
      if (version !== VERSION || keyId === undefined || iv === undefined || body === undefined || extra !== undefined) throw new VaultError('not a sealed credential');
      const key = keys.get(keyId);
      if (!key) throw new VaultError(`credential sealed with key "${keyId}", which is no longer configured`);
      const bytes = Buffer.from(body, 'base64url');
      if (bytes.length < TAG_BYTES) throw new VaultError('not a sealed credential');
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url')).setAAD(Buffer.from(context));
        decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
        return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
      } catch {
        throw new VaultError('credential does not open (wrong key or context, or tampered)');
      }
    },
  };
}

/** The vault of the live config's `credentials`, made again only when a reload changes its keys. */
export function liveVault(config: () => { credentials: CredentialsConfig }): () => Vault {
  let made: { keys: string; vault: Vault } | undefined;
  return () => {
    const keys = config().credentials;
    const id = JSON.stringify(keys);
    if (made?.keys !== id) made = { keys: id, vault: createVault(keys) };
    return made.vault;
  };
}
