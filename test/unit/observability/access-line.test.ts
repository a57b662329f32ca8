import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { writeAccessLine } from '../../../src/observability/access-line.js';
import { createLogger, writesAccessLinesDirectly } from '../../../src/observability/logger.js';
import { testConfig } from '../../helpers/build.js';

function capture(): { stream: Writable; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { stream, lines };
}

const sameTime = (line: string) => line.replace(/"time":\d+/, '"time":0');

describe('the direct access line', () => {
  it('is byte for byte the line pino writes for the same fields (time aside), odd URLs and numbers included', async () => {
    const { stream, lines } = capture();
    const root = createLogger(testConfig({ logging: { level: 'info' } }), stream);
    // As Fastify makes them: a child of the app logger per request, bound to the request id.
    const request = root.child({}).child({ requestId: 'req-"1"\\x' }, {});
    const cases: Array<[string, string, number, number]> = [
      ['POST', '/v1/execute', 200, 0.123456],
      ['GET', '/v1/tools?format=openai&q="x"\\y', 304, 12],
      ['DELETE', '/v1/users/%C3%A9/mcp-servers/a', 404, 0],
      ['GET', '/caf\u00e9/\u00ff\u0080', 500, Number.NaN],
      ['PUT', `/${'long-segment/'.repeat(20)}`, 201, Number.POSITIVE_INFINITY],
    ];
    for (const [method, url, statusCode, responseTime] of cases) {
      request.info({ method, url, statusCode, responseTime }, 'request completed');
      writeAccessLine(request, method, url, statusCode, responseTime);
    }
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines).toHaveLength(cases.length * 2);
    for (let i = 0; i < lines.length; i += 2) {
      expect(sameTime(lines[i + 1]!)).toBe(sameTime(lines[i]!));
      expect(JSON.parse(lines[i + 1]!)).toMatchObject({ level: 30, requestId: 'req-"1"\\x', msg: 'request completed' });
    }
  });

  it('is used only for loggers createLogger made, and not when a redact path names one of its fields', () => {
    const { stream } = capture();
    expect(writesAccessLinesDirectly(createLogger(testConfig({ logging: { level: 'info' } }), stream))).toBe(true);
    expect(writesAccessLinesDirectly(createLogger(testConfig({ logging: { level: 'info', redact: ['url'] } }), stream))).toBe(false);
    expect(writesAccessLinesDirectly(createLogger(testConfig({ logging: { level: 'info', redact: ['method.x'] } }), stream))).toBe(false);
    for (const path of ['["url"]', "['statusCode']", '*', '*.x', 'msg', 'responseTime[0]']) {
      expect(writesAccessLinesDirectly(createLogger(testConfig({ logging: { level: 'info', redact: [path] } }), stream)), path).toBe(false);
    }
    expect(writesAccessLinesDirectly(createLogger(testConfig({ logging: { level: 'info', redact: ['body.password', 'urls', '["x"]'] } }), stream))).toBe(true);
    expect(writesAccessLinesDirectly({})).toBe(false);
    expect(writesAccessLinesDirectly(undefined)).toBe(false);
  });
});
