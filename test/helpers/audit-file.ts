import { readFile } from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';

export type AuditLine = Record<string, unknown>;

/** Every line the app's `file` audit sink has written to `path` so far (flushed first), parsed. */
export async function readAuditLines(app: FastifyInstance, path: string): Promise<AuditLine[]> {
  await app.audit.flush();
  const text = await readFile(path, 'utf8').catch(() => '');
  return text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as AuditLine);
}
