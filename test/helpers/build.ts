import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { SignJWT } from 'jose';
import { buildServer, type BuildOptions } from '../../src/app.js';
import { validateConfigObject } from '../../src/config/load.js';
import type { GatewayConfig } from '../../src/config/types.js';
import { packageRoot } from '../../src/config/demo.js';

export const JWT_SECRET = 'test-secret-that-is-at-least-32-bytes-long!!';
export const API_KEY = 'tg_test_key_acme_admin';
/** A global operator (`auth.operators`); its tenant role is none. */
export const OPERATOR_KEY = 'tg_test_key_operator';
export const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** A test config: the raw YAML-shaped object, validated exactly like a file (paths resolve against the repo root). */
export function testConfig(raw: Record<string, unknown> = {}): GatewayConfig {
  return validateConfigObject(
    {
      auth: {
        jwt: { secret: JWT_SECRET, issuer: 'https://issuer.test', audience: 'toolgate' },
        apiKeys: [
          { id: 'ci', sha256: sha256(API_KEY), tenant: 'acme', user: 'ci-bot', roles: ['admin'] },
          { id: 'ops', sha256: sha256(OPERATOR_KEY), tenant: 'acme', user: 'ops', roles: [] },
        ],
        operators: [{ apiKey: 'ops' }],
      },
      audit: { sink: 'off' },
      functions: [{ module: './test/fixtures/functions/basic.mjs' }],
      tenants: { acme: {}, globex: {} },
      logging: { level: 'silent' },
      ...raw,
    },
    packageRoot(),
    undefined,
  );
}

/** Builds an un-listened app; closes it when the test file ends (pass the hook from vitest). */
export async function buildTestApp(config: GatewayConfig = testConfig(), options: BuildOptions = {}): Promise<FastifyInstance> {
  return buildServer(config, { logger: false, defaultMetrics: false, ...options });
}

export interface TokenClaims {
  tenant?: unknown;
  sub?: string;
  roles?: string[];
  [claim: string]: unknown;
}

/** Signs an HS256 JWT for the test issuer/audience; override anything. */
export async function signToken(claims: TokenClaims = {}, options: { expiresIn?: string | number; secret?: string; issuer?: string; audience?: string } = {}): Promise<string> {
  const { sub = 'alice', ...rest } = claims;
  const payload = { tenant: 'acme', roles: [], ...rest };
  return new SignJWT(payload)
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(sub)
    .setIssuer(options.issuer ?? 'https://issuer.test')
    .setAudience(options.audience ?? 'toolgate')
    .setIssuedAt()
    .setExpirationTime(options.expiresIn ?? '5m')
    .sign(new TextEncoder().encode(options.secret ?? JWT_SECRET));
}

export const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

/** The Prometheus text of an app's metrics listener (where metrics live by default), without listening. */
export async function scrapeMetrics(app: FastifyInstance): Promise<string> {
  if (!app.metricsServer) throw new Error('metrics listener is disabled (metrics.enabled: false)');
  return (await app.metricsServer.inject({ url: '/metrics' })).body;
}
