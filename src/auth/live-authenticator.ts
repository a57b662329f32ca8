import type { AuthConfig } from '../config/types.js';
import { createAuthenticator, type Authenticator, type AuthenticatorOptions } from './authenticator.js';

export interface LiveAuthenticator {
  /** The authenticator of the config in force. */
  current(): Authenticator;
  /**
   * Builds the authenticator of a config being reloaded (keys and JWT settings); the returned commit puts it in
   * force, with an empty token cache. Nothing changes if the reload fails before committing.
   */
  prepare(next: AuthConfig): Promise<() => void>;
}

export async function createLiveAuthenticator(started: AuthConfig, options: AuthenticatorOptions = {}): Promise<LiveAuthenticator> {
  let inForce = await createAuthenticator(started, options);
  return {
    current: () => inForce,
    async prepare(next) {
      const prepared = await createAuthenticator(next, options);
      return () => {
        inForce = prepared;
      };
    },
  };
}
