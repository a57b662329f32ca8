import { createHash } from 'node:crypto';

/** JSON with object keys sorted at every level: equal values give equal text in any process. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) return item;
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(item).sort()) sorted[key] = (item as Record<string, unknown>)[key];
    return sorted;
  });
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
