// Who makes a call: built only from a verified credential (docs/security-model.md).

/** A verified caller. Built only from a verified token, never from headers or body fields. */
export interface Principal {
  readonly tenant: string;
  /** The raw `sub` claim (or the API key's configured user). */
  readonly user: string;
  readonly roles: readonly string[];
  /** Every verified claim, for server-side bindings (`${claims.NAME}`). */
  readonly claims: Readonly<Record<string, unknown>>;
  /** A global operator (`auth.operators`): may reload and run other gateway-wide admin operations. */
  readonly operator?: boolean;
  /** The credential the token was; absent for principals rebuilt from a stored record (an approved call). */
  readonly credential?: Credential;
}

/**
 * The credential behind a principal. A runtime key names the chain of credentials that minted it, creator
 * first: the key lives only while every one of them does, and everyone on the chain held the key
 * (docs/security-model.md#runtime-keys).
 */
export type Credential =
  | { readonly kind: 'jwt' }
  | { readonly kind: 'apiKey'; readonly id: string; readonly sha256: string }
  | { readonly kind: 'runtimeKey'; readonly id: string; readonly sha256: string; readonly issuers: readonly KeyIssuer[] };

/** One link of a runtime key's chain of creators: who minted it and with which credential. */
export type KeyIssuer =
  | { readonly user: string; readonly kind: 'jwt' }
  | { readonly user: string; readonly kind: 'apiKey' | 'runtimeKey'; readonly id: string; readonly sha256: string };
