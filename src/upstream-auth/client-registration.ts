// The client toolgate registered itself as (RFC 7591) at a discovered authorization server, once per service
// and server for every replica (docs/security-model.md#upstream-identity): the registration lives in the state
// store, its secret sealed by the vault, and a lease keeps two replicas from both registering.
import { createHash } from 'node:crypto';
import type { StateStore } from '../store/types.js';
import { AuthServerError } from './auth-server-error.js';
import { VaultError, type Vault } from './vault.js';

export interface RegisteredClient {
  clientId: string;
  clientSecret?: string;
  /** `token_endpoint_auth_method` the server granted. */
  authMethod?: string;
}

interface StoredClient {
  clientId: string;
  sealedSecret?: string;
  authMethod?: string;
}

export interface ClientRegistrationDeps {
  store: StateStore;
  vault: () => Vault;
}

const POLL_MS = 100;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const recordId = (scope: { service: string; issuer: string }): string => createHash('sha256').update(JSON.stringify([scope.service, scope.issuer])).digest('hex').slice(0, 32);

/**
 * The server no longer knows the client (`invalid_client`: it expired or was deleted there): its record goes,
 * so the next use registers anew. Only while the record still names that client: a replica that already
 * registered a new one keeps it.
 */
export async function forgetRegisteredClient(deps: Pick<ClientRegistrationDeps, 'store'>, scope: { service: string; issuer: string }, clientId: string): Promise<void> {
  const key = `upstream-client:${recordId(scope)}`;
  const raw = await deps.store.get(key);
  if (raw === null) return;
  try {
    if ((JSON.parse(raw) as StoredClient).clientId !== clientId) return;
  } catch {
    // An unreadable record is of no use either.
  }
  // Emptied only if unchanged (an empty record reads as none); a delete could remove a newer registration.
  await deps.store.compareAndSet(key, raw, '', { ttlMs: 1000 });
}

/** One registered client per (service, server): read it, or register under a lease and keep it. */
export async function registeredClient(
  deps: ClientRegistrationDeps,
  scope: { service: string; issuer: string; timeoutMs: number },
  register: () => Promise<RegisteredClient>,
): Promise<RegisteredClient> {
  const id = recordId(scope);
  const key = `upstream-client:${id}`;
  const context = `upstream-client\u0000${id}`;
  const read = async (): Promise<RegisteredClient | undefined> => {
    const raw = await deps.store.get(key);
    if (raw === null) return undefined;
    try {
      const stored = JSON.parse(raw) as StoredClient;
      return {
        clientId: stored.clientId,
        ...(stored.sealedSecret !== undefined ? { clientSecret: deps.vault().open(stored.sealedSecret, context) } : {}),
        ...(stored.authMethod !== undefined ? { authMethod: stored.authMethod } : {}),
      };
    } catch (error) {
      // A record sealed with a key since removed (or otherwise unreadable) is of no use: register anew.
      if (error instanceof VaultError || error instanceof SyntaxError) return undefined;
      throw error;
    }
  };
  const known = await read();
  if (known) return known;
  // The lease outlives one registration request (bounded by timeoutMs); a replica that finds it taken waits
  // for the record, bounded the same way, and never registers a second client.
  const leaseMs = scope.timeoutMs * 2;
  if (!(await deps.store.setIfAbsent(`${key}:lease`, '1', { ttlMs: leaseMs }))) {
    for (let waited = 0; waited < leaseMs; waited += POLL_MS) {
      await sleep(POLL_MS);
      const landed = await read();
      if (landed) return landed;
    }
    throw new AuthServerError('unavailable', 'a client registration in progress elsewhere did not finish in time');
  }
  try {
    const landed = await read();
    if (landed) return landed;
    const client = await register();
    const stored: StoredClient = {
      clientId: client.clientId,
      ...(client.clientSecret !== undefined ? { sealedSecret: deps.vault().seal(client.clientSecret, context) } : {}),
      ...(client.authMethod !== undefined ? { authMethod: client.authMethod } : {}),
    };
    await deps.store.set(key, JSON.stringify(stored));
    return client;
  } finally {
    await deps.store.delete(`${key}:lease`);
  }
}
