import { LogController, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import pino from 'pino';
import type { GatewayConfig } from '../config/types.js';
import { traceIds } from './tracing.js';

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

const OAUTH_CALLBACK = '/oauth/callback';

/**
 * The URL as log lines show it: the OAuth callback's query (an authorization code and its flow's `state`,
 * both single-use secrets of a user's connect flow) is never written (docs/security-model.md#upstream-identity).
 */
export function loggableUrl(url: string): string {
  return url.startsWith(`${OAUTH_CALLBACK}?`) ? `${OAUTH_CALLBACK}?[redacted]` : url;
}

/**
 * One access line per request ("request completed" with method, url, status and time) instead of
 * Fastify's two; the "incoming request" line stays available at debug level. With `quietReads`
 * (`logging.quietReads`, on in the demo) a successful GET or HEAD — probes, a console polling — is logged at
 * debug, so what a person must read (the demo's keys, failures, calls) does not scroll away.
 */
export class AccessLogController extends LogController {
  private readonly quietReads: boolean;

  constructor(options: ConstructorParameters<typeof LogController>[0] & { quietReads?: boolean } = {}) {
    const { quietReads, ...rest } = options;
    super(rest);
    this.quietReads = quietReads ?? false;
  }

  override incomingRequest(request: FastifyRequest): void {
    if (this.isLogDisabled(request)) return;
    const url = loggableUrl(request.url);
    request.log.debug(url === request.url ? { req: request } : { req: { method: request.method, url } }, 'incoming request');
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    const line = { method: request.method, url: loggableUrl(request.url), statusCode: reply.statusCode, responseTime: reply.elapsedTime };
    // With tracing on, the line names the request's trace (logs, audit events and traces join on it).
    if (request.traceContext !== undefined) Object.assign(line, traceIds(request.traceContext));
    if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else if (this.quietReads && reply.statusCode < 400 && (request.method === 'GET' || request.method === 'HEAD')) reply.log.debug(line, 'request completed');
    else reply.log.info(line, 'request completed');
  }
}

/** The gateway's logger: pino with loggerOptions(config), writing to `destination`. */
export function createLogger(config: GatewayConfig, destination: pino.DestinationStream): pino.Logger {
  return pino(loggerOptions(config) as pino.LoggerOptions, destination);
}

export function loggerOptions(config: GatewayConfig): FastifyServerOptions['logger'] {
  return {
    level: config.logging.level,
    redact: { paths: [...REDACT_PATHS, ...config.logging.redact], censor: '[redacted]' },
  };
}
