import { hash } from 'node:crypto';

/**
 * JSON with object keys sorted at every level: equal values give equal text in any process.
 * Written out directly (no replacer, no sorted copies): it runs on every audited call.
 */
export function canonicalJson(value: unknown): string {
  return serialize(value) ?? 'null';
}

function serialize(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return serialize((value as { toJSON(): unknown }).toJSON());
  if (Array.isArray(value)) return `[${value.map((item) => serialize(item) ?? 'null').join(',')}]`;
  const record = value as Record<string, unknown>;
  const parts: string[] = [];
  for (const key of Object.keys(record).sort()) {
    const item = serialize(record[key]);
    if (item !== undefined) parts.push(`${JSON.stringify(key)}:${item}`);
  }
  return `{${parts.join(',')}}`;
}

// One-shot crypto.hash (Node ≥ 20.12): about a third of createHash().update().digest() for short inputs.
export function sha256Hex(text: string): string {
  return hash('sha256', text, 'hex');
}
