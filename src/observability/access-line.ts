import pino from 'pino';

const { chindingsSym, endSym, lsCacheSym, streamSym, timeSym } = pino.symbols;

/** The fields of the access line: a redact path on any of them needs pino's own formatting. */
export const ACCESS_LINE_KEYS = ['method', 'url', 'statusCode', 'responseTime', 'msg'] as const;

const INFO = 30;
const MESSAGE = ',"msg":"request completed"';

// pino's own per-logger state, read through its exported symbols (`pino.symbols`, typed as plain symbols).
const internal = <T>(log: pino.BaseLogger, key: symbol): T => (log as unknown as Record<symbol, T>)[key]!;

/**
 * Writes the access line ("request completed" with method, url, statusCode and responseTime) as the one
 * string pino writes for `log.info({method, url, statusCode, responseTime}, 'request completed')`: level
 * prefix, time and bindings (the request id among them) from the logger itself, then the fields in that
 * order. pino's generic path walks the object and concatenates piece by piece; this runs on every
 * request. Only for loggers whose options cannot change that line (see createLogger); a test keeps both
 * outputs equal.
 */
export function writeAccessLine(log: pino.BaseLogger, method: string, url: string, statusCode: number, responseTime: number): void {
  const prefix = internal<Record<number, string>>(log, lsCacheSym)[INFO];
  const time = internal<() => string>(log, timeSym)();
  const bindings = internal<string>(log, chindingsSym);
  const end = internal<string>(log, endSym);
  // Node decodes request URLs as latin1, so JSON.stringify escapes them exactly as pino does.
  internal<{ write(line: string): unknown }>(log, streamSym).write(
    `${prefix}${time}${bindings},"method":${JSON.stringify(method)},"url":${JSON.stringify(url)},"statusCode":${statusCode},"responseTime":${Number.isFinite(responseTime) ? responseTime : null}${MESSAGE}${end}`,
  );
}
