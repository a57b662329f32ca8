import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { createLogger, loggerOptions } from '../../src/observability/logger.js';
import { bearer, buildTestApp, signToken, testConfig } from '../helpers/build.js';

// Logs as `npm start` writes them (JSON at info, the configured redaction), captured line by line: through
// toolgate's own logger (access lines written directly) and through a plain pino instance (pino formats them).
const loggers = {
  'toolgate logger': (config: ReturnType<typeof testConfig>, stream: Writable) => createLogger(config, stream),
  'plain pino logger': (config: ReturnType<typeof testConfig>, stream: Writable) => pino(loggerOptions(config) as pino.LoggerOptions, stream),
};

describe.each(Object.entries(loggers))('request logging through a %s', (_kind, makeLogger) => {
  const raw: string[] = [];
  const lines = (): Array<Record<string, unknown>> => raw.map((line) => JSON.parse(line) as Record<string, unknown>);
  let app: FastifyInstance;
  let token: string;

  beforeAll(async () => {
    const config = testConfig({ logging: { level: 'info' } });
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        raw.push(...chunk.toString().split('\n').filter(Boolean));
        done();
      },
    });
    app = await buildTestApp(config, { logger: undefined, loggerInstance: makeLogger(config, stream) });
    token = await signToken();
  });
  afterAll(async () => app.close());

  it('puts the request id on every line of a request and writes one access line per request, without credentials', async () => {
    raw.length = 0;
    const execute = (requestId: string, body: Record<string, unknown>, headers = bearer(token)) =>
      app.inject({ method: 'POST', url: '/v1/execute', headers: { ...headers, 'x-request-id': requestId }, payload: body });
    expect((await execute('req-ok', { name: 'get_weather', arguments: { city: 'Oslo' } })).statusCode).toBe(200);
    expect((await execute('req-throws', { name: 'explode' })).statusCode).toBe(200);
    expect((await execute('req-forged', { name: 'get_weather' }, bearer(`${token}x`))).statusCode).toBe(401);
    expect((await app.inject({ method: 'GET', url: '/nope', headers: { 'x-request-id': 'req-404' } })).statusCode).toBe(404);

    const logged = lines();
    expect(logged.length).toBeGreaterThanOrEqual(4);
    for (const line of logged) expect(line.requestId).toMatch(/^req-(ok|throws|forged|404)$/);
    const access = logged.filter((line) => line.msg === 'request completed');
    expect(access.map((line) => [line.requestId, line.statusCode])).toEqual([
      ['req-ok', 200],
      ['req-throws', 200],
      ['req-forged', 401],
      ['req-404', 404],
    ]);
    expect(access[0]).toMatchObject({ level: 30, method: 'POST', url: '/v1/execute', responseTime: expect.any(Number) });
    expect(raw.join('\n')).not.toContain(token.slice(-20));
  });
});
