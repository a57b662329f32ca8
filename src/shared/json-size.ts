/**
 * The size in UTF-8 bytes of `value` as `JSON.stringify` writes it, counted without building the text and
 * given up once it passes `limit` (the answer is then some number above `limit`). For bounding what a
 * caller sent before copying it anywhere: a refused 1 MB argument costs a walk, not another 1 MB string.
 * Plain JSON values (parsed JSON) only: no toJSON, no cycles.
 */
export function jsonSizeUpTo(value: unknown, limit: number): number {
  let size = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && size <= limit) {
    const next = stack.pop();
    if (typeof next === 'string') size += stringSize(next, limit - size);
    else if (typeof next === 'number') size += Number.isFinite(next) ? String(next).length : 4;
    else if (typeof next === 'boolean') size += next ? 4 : 5;
    else if (next === null || typeof next !== 'object') size += 4;
    else if (Array.isArray(next)) {
      size += 2 + Math.max(0, next.length - 1);
      for (const item of next) stack.push(item === undefined ? null : item);
    } else {
      const entries = Object.entries(next).filter(([, item]) => item !== undefined);
      size += 2 + Math.max(0, entries.length - 1) + entries.length;
      for (const [key, item] of entries) stack.push(key, item);
    }
  }
  return size;
}

/** A string's JSON size: quotes, its UTF-8 bytes, and what escaping adds (scanned only when it may still fit). */
function stringSize(text: string, room: number): number {
  const bytes = 2 + Buffer.byteLength(text, 'utf8');
  if (bytes > room) return bytes;
  let extra = 0;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code === 0x22 || code === 0x5c || code === 0x08 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d) extra += 1;
    else if (code < 0x20) extra += 5;
    else if (code >= 0xd800 && code <= 0xdfff && !isPaired(text, i)) extra += 3; // a lone surrogate: \udXXX (6) instead of 3 bytes
    else if (code >= 0xd800 && code <= 0xdbff) i += 1;
  }
  return bytes + extra;
}

const isPaired = (text: string, i: number): boolean => {
  const code = text.charCodeAt(i);
  if (code <= 0xdbff) {
    const low = text.charCodeAt(i + 1);
    return low >= 0xdc00 && low <= 0xdfff;
  }
  return false;
};
