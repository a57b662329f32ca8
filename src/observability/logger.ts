import { LogController, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import pino from 'pino';
import type { GatewayConfig } from '../config/types.js';
import { ACCESS_LINE_KEYS, writeAccessLine } from './access-line.js';

/**
 * Redaction paths in one place: credentials never reach a log line. Exact paths only — wildcard paths
 * make pino walk every logged object on every line, and nothing toolgate logs nests credentials deeper.
 */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'headers.authorization',
  'headers.cookie',
  'authorization',
  'password',
  'secret',
  'token',
  'apiKey',
];

/**
 * One access line per request ("request completed" with method, url, status and time) instead of
 * Fastify's two; the "incoming request" line stays available at debug level.
 */
export class AccessLogController extends LogController {
  private readonly directAccessLines: boolean;

  /** `directAccessLines`: the app logs through a logger made by createLogger, whose access line can be written directly. */
  constructor(options: ConstructorParameters<typeof LogController>[0] & { directAccessLines?: boolean }) {
    super(options);
    this.directAccessLines = options?.directAccessLines === true;
  }

  override incomingRequest(request: FastifyRequest): void {
    if (!this.isLogDisabled(request)) request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    if (!error && this.directAccessLines) {
      const log = reply.log as pino.Logger;
      if (log.isLevelEnabled('info')) writeAccessLine(log, request.method, request.url, reply.statusCode, reply.elapsedTime);
      return;
    }
    const line = { method: request.method, url: request.url, statusCode: reply.statusCode, responseTime: reply.elapsedTime };
    if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else reply.log.info(line, 'request completed');
  }
}

const directFormat = new WeakSet<object>();

/**
 * The gateway's logger: pino with loggerOptions(config) on `destination`. Loggers made here have no
 * formatters, mixin, hooks or message prefix, so their access line can be written directly (see
 * writeAccessLine), unless a configured redact path names one of its fields.
 */
export function createLogger(config: GatewayConfig, destination: pino.DestinationStream): pino.Logger {
  const logger = pino(loggerOptions(config) as pino.LoggerOptions, destination);
  if (!config.logging.redact.some(namesAccessField)) directFormat.add(logger);
  return logger;
}

// The first key of a redact path: `a.b`, `a[0]`, `["a"]` or `['a']`; a wildcard may name any key.
const TOP_KEY = /^\s*(?:\[\s*"([^"]*)"\s*\]|\[\s*'([^']*)'\s*\]|([^.[\s]*))/;

function namesAccessField(path: string): boolean {
  const match = TOP_KEY.exec(path);
  const key = match?.[1] ?? match?.[2] ?? match?.[3] ?? '';
  return key === '*' || (ACCESS_LINE_KEYS as readonly string[]).includes(key);
}

/** True for a logger from createLogger whose access line may be written directly. */
export function writesAccessLinesDirectly(logger: unknown): boolean {
  return typeof logger === 'object' && logger !== null && directFormat.has(logger);
}

export function loggerOptions(config: GatewayConfig): FastifyServerOptions['logger'] {
  return {
    level: config.logging.level,
    redact: { paths: [...REDACT_PATHS, ...config.logging.redact], censor: '[redacted]' },
  };
}
