// The JSONPath subset guardrail rules select fields with (docs/governance.md#selecting-fields): `$`, `.name`,
// `['name']`, `[n]`, `[*]` / `.*`, and `..name` (every `name` below). No filters or scripts: a selector is
// parsed once, when the config is loaded, and evaluating it visits each node of the value at most once per
// segment, within the scan's depth bound.

export type Segment = { kind: 'member'; name: string } | { kind: 'index'; index: number } | { kind: 'wildcard' } | { kind: 'descendant'; name: string };

export class SelectorError extends Error {}

const NAME = /^[A-Za-z_$][A-Za-z0-9_$-]*/;
const MAX_SELECTOR_CHARS = 256;

/** Parses a selector of the subset, or throws SelectorError naming what is not supported. */
export function parseSelector(source: string): Segment[] {
  if (source.length > MAX_SELECTOR_CHARS) throw new SelectorError(`is longer than ${MAX_SELECTOR_CHARS} characters`);
  if (!source.startsWith('$')) throw new SelectorError('must start with $');
  const segments: Segment[] = [];
  let at = 1;
  while (at < source.length) {
    const rest = source.slice(at);
    if (rest.startsWith('..')) {
      const name = NAME.exec(rest.slice(2))?.[0];
      if (!name) throw new SelectorError(`needs a field name after .. at ${at}`);
      segments.push({ kind: 'descendant', name });
      at += 2 + name.length;
    } else if (rest.startsWith('.*')) {
      segments.push({ kind: 'wildcard' });
      at += 2;
    } else if (rest.startsWith('.')) {
      const name = NAME.exec(rest.slice(1))?.[0];
      if (!name) throw new SelectorError(`needs a field name after . at ${at}`);
      segments.push({ kind: 'member', name });
      at += 1 + name.length;
    } else if (rest.startsWith('[*]')) {
      segments.push({ kind: 'wildcard' });
      at += 3;
    } else {
      const bracket = /^\[(?:(\d{1,9})|'([^'\\]{1,128})'|"([^"\\]{1,128})")\]/.exec(rest);
      if (!bracket) throw new SelectorError(`has an unsupported part at ${at} (supported: .name, ['name'], [n], [*], .*, ..name)`);
      segments.push(bracket[1] !== undefined ? { kind: 'index', index: Number(bracket[1]) } : { kind: 'member', name: (bracket[2] ?? bracket[3])! });
      at += bracket[0].length;
    }
  }
  return segments;
}

type Container = Record<string, unknown> | unknown[];
const isContainer = (value: unknown): value is Container => typeof value === 'object' && value !== null;

/** Calls `visit(container, key)` for every place the selector selects in `root` (never the root itself). */
export function selectPlaces(root: unknown, segments: readonly Segment[], visit: (container: Container, key: string | number) => void, maxDepth = 64): void {
  const step = (value: unknown, i: number, depth: number): void => {
    if (i >= segments.length || !isContainer(value) || depth > maxDepth) return;
    const segment = segments[i]!;
    const last = i === segments.length - 1;
    const at = (key: string | number) => {
      if (last) visit(value, key);
      else step((value as Record<string | number, unknown>)[key], i + 1, depth + 1);
    };
    if (segment.kind === 'member') {
      if (!Array.isArray(value) && Object.hasOwn(value, segment.name)) at(segment.name);
    } else if (segment.kind === 'index') {
      if (Array.isArray(value) && segment.index < value.length) at(segment.index);
    } else if (segment.kind === 'wildcard') {
      for (const key of Array.isArray(value) ? value.keys() : Object.keys(value)) at(key);
    } else {
      // `..name`: this level's `name`, then every level below (each node reached once).
      const descend = (node: unknown, d: number): void => {
        if (!isContainer(node) || d > maxDepth) return;
        if (!Array.isArray(node) && Object.hasOwn(node, segment.name)) {
          if (last) visit(node, segment.name);
          else step(node[segment.name], i + 1, d + 1);
        }
        for (const child of Array.isArray(node) ? node : Object.values(node)) descend(child, d + 1);
      };
      descend(value, depth);
    }
  };
  step(root, 0, 0);
}
