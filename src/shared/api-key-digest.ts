import { hash, randomBytes } from 'node:crypto';

/** What `auth.apiKeys[].sha256` holds for a key: the SHA-256 of its UTF-8 text, lower-case hex. */
export const apiKeyDigest = (key: string): string => hash('sha256', key, 'hex');

/** A new random API key (192 bits, URL-safe) with a recognisable prefix. */
export const newApiKey = (prefix = 'tg_'): string => `${prefix}${randomBytes(24).toString('base64url')}`;
