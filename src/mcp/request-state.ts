// A `requestState` toolgate mints itself (docs/mcp.md#request-state): opaque to the client that echoes it
// back, so attacker-controlled on its way in. It is sealed with the credential vault (AES-256-GCM; the key id
// rides along, so keys rotate as for credentials), its tenant, user and call are the authenticated data (a
// state copied into another user's, tenant's or call's request does not open), it carries its expiry, and
// it opens once: a replay of a state already taken is refused, on every replica (the nonce is claimed in the
// shared store).
import { randomBytes } from 'node:crypto';
import type { StateStore } from '../store/types.js';
import { VaultError, type Vault } from '../upstream-auth/vault.js';

/** Who and which call a state belongs to. */
export interface RequestStateBinding {
  tenant: string;
  user: string;
  /** The call (or request) the state continues: a state minted for one call does not continue another. */
  callId: string;
}

/**
 * Why a state was refused. `invalid` covers tampered, foreign (another tenant, user or call), unknown key and
 * malformed alike, so the refusal tells a caller nothing about states that are not its own; `expired` and
 * `replayed` are only said of a state that opened for this very binding.
 */
export type RequestStateRefusal = 'invalid' | 'expired' | 'replayed';

export class RequestStateRefused extends Error {
  // A domain error, not a request-level TG_ code: toolgate's /mcp answers it on the JSON-RPC wire (-32602).
  readonly code = 'REQUEST_STATE_REFUSED';
  constructor(readonly reason: RequestStateRefusal) {
    super(reason === 'invalid' ? 'requestState is not valid for this request' : `requestState is ${reason}`);
    this.name = 'RequestStateRefused';
  }
}

export interface RequestStateSealer {
  /** A sealed state holding `payload` for `binding`, valid for `ttlMs`. */
  seal(binding: RequestStateBinding, payload: string, ttlMs: number): string;
  /** The payload of a state sealed for `binding`, once; throws RequestStateRefused otherwise. */
  open(sealed: string, binding: RequestStateBinding): Promise<string>;
}

export interface RequestStateOptions {
  vault: Vault;
  /** Where taken nonces are remembered until their state expires (the shared store behind replicas). */
  store: Pick<StateStore, 'setIfAbsent'>;
  /** Key prefix of the taken nonces. */
  prefix?: string;
  now?: () => number;
}

/** The longest a state may live: a question answered by a human, bounded. */
export const MAX_REQUEST_STATE_TTL_MS = 60 * 60 * 1000;
/** Longer than any real state; a sealed value beyond it is not ours. */
const MAX_SEALED_CHARS = 16 * 1024;
const NONCE_BYTES = 16;

interface Sealed {
  n: string;
  exp: number;
  p: string;
}

const contextOf = (binding: RequestStateBinding): string => JSON.stringify(['toolgate/request-state', binding.tenant, binding.user, binding.callId]);

function parse(plaintext: string): Sealed | undefined {
  try {
    const value = JSON.parse(plaintext) as Partial<Sealed>;
    return typeof value.n === 'string' && typeof value.exp === 'number' && typeof value.p === 'string' ? { n: value.n, exp: value.exp, p: value.p } : undefined;
  } catch {
    return undefined;
  }
}

export function createRequestStateSealer(options: RequestStateOptions): RequestStateSealer {
  const now = options.now ?? Date.now;
  const prefix = options.prefix ?? 'request-state:taken:';
  return {
    seal(binding, payload, ttlMs) {
      const lifetime = Math.min(Math.max(1, ttlMs), MAX_REQUEST_STATE_TTL_MS);
      const sealed: Sealed = { n: randomBytes(NONCE_BYTES).toString('base64url'), exp: now() + lifetime, p: payload };
      return options.vault.seal(JSON.stringify(sealed), contextOf(binding));
    },
    async open(sealed, binding) {
      if (sealed.length > MAX_SEALED_CHARS) throw new RequestStateRefused('invalid');
      let plaintext: string;
      try {
        plaintext = options.vault.open(sealed, contextOf(binding));
      } catch (error) {
        if (error instanceof VaultError) throw new RequestStateRefused('invalid');
        throw error;
      }
      const state = parse(plaintext);
      if (!state) throw new RequestStateRefused('invalid');
      const left = state.exp - now();
      if (left <= 0) throw new RequestStateRefused('expired');
      // Claimed once, for as long as it could still be presented.
      const first = await options.store.setIfAbsent(`${prefix}${state.n}`, '1', { ttlMs: left });
      if (!first) throw new RequestStateRefused('replayed');
      return state.p;
    },
  };
}
