import type { FastifyServerOptions } from 'fastify';
import type { GatewayConfig } from '../config/types.js';

/** Redaction paths in one place: credentials never reach a log line. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'headers.authorization',
  'authorization',
  '*.authorization',
  '*.password',
  '*.secret',
  '*.token',
  '*.apiKey',
];

export function loggerOptions(config: GatewayConfig): FastifyServerOptions['logger'] {
  return {
    level: config.logging.level,
    redact: { paths: [...REDACT_PATHS, ...config.logging.redact], censor: '[redacted]' },
  };
}
