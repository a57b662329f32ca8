import pino from 'pino';

/** Benches measure the request path, not log I/O. */
export const silentLogger = pino({ level: 'silent' });
