import type { ValidateFunction } from 'ajv';

// `${env:NAME}` always gives a string. Where the schema asks for a number or a boolean, an interpolated
// string that reads as one is taken as one (`port: ${env:METRICS_PORT}`). A literal "9464" written in the
// file is left alone: the schema names it as the wrong type, as it should.

const decodePointer = (pointer: string): string => pointer.replace(/~1/g, '/').replace(/~0/g, '~');

function coerce(text: string, types: readonly string[]): unknown {
  const trimmed = text.trim();
  if (types.includes('integer') && /^-?\d+$/.test(trimmed)) return Number(trimmed);
  if (types.includes('number') && trimmed !== '' && Number.isFinite(Number(trimmed))) return Number(trimmed);
  if (types.includes('boolean') && (trimmed === 'true' || trimmed === 'false')) return trimmed === 'true';
  return undefined;
}

function parentOf(root: unknown, pointer: string): { holder: Record<string, unknown>; key: string } | undefined {
  const keys = pointer.split('/').slice(1).map(decodePointer);
  const last = keys.pop();
  let node = root;
  for (const key of keys) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  if (last === undefined || node === null || typeof node !== 'object') return undefined;
  return { holder: node as Record<string, unknown>, key: last };
}

/**
 * Coerces, in place, each interpolated string (paths as `interpolateSecrets` reports them) that the schema
 * wants as a number or boolean. Validation runs on copies, so the schema's defaults are not filled here.
 */
export function coerceInterpolated(candidate: unknown, interpolated: ReadonlySet<string>, validate: ValidateFunction): void {
  if (interpolated.size === 0) return;
  // A coerced value can let a `oneOf` branch match and show the next mismatch below it: a few passes at most.
  for (let pass = 0; pass < 3; pass++) {
    if (validate(structuredClone(candidate))) return;
    let changed = false;
    for (const error of validate.errors ?? []) {
      if (error.keyword !== 'type' || !interpolated.has(decodePointer(error.instancePath))) continue;
      const at = parentOf(candidate, error.instancePath);
      const current = at?.holder[at.key];
      if (!at || typeof current !== 'string') continue;
      const types = String(error.params.type).split(',');
      const value = coerce(current, types);
      if (value === undefined) continue;
      at.holder[at.key] = value;
      changed = true;
    }
    if (!changed) return;
  }
}
