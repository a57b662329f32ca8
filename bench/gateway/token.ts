import { SignJWT } from 'jose';

// Bench-only credentials: the servers listen on 127.0.0.1 and live for one run.
export const BENCH_JWT_SECRET = 'bench-only-secret-that-is-at-least-32-bytes!';
export const BENCH_ISSUER = 'https://bench.toolgate.local';
export const BENCH_AUDIENCE = 'toolgate';

/** One HS256 token used for every request (so the token cache, when on, hits). */
export async function benchToken(): Promise<string> {
  return new SignJWT({ tenant: 'bench', roles: [] })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject('bench-user')
    .setIssuer(BENCH_ISSUER)
    .setAudience(BENCH_AUDIENCE)
    .setIssuedAt()
    .setExpirationTime('2h')
    .sign(new TextEncoder().encode(BENCH_JWT_SECRET));
}
