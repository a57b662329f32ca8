import { createRequire } from 'node:module';

type StripTypes = (source: string, options: { mode: 'strip-only' }) => { code: string };

// amaro is Node's own type stripper (swc compiled to WebAssembly, shipped in the package); on Node 20 it is
// not built in. Loaded on the first script only: its WebAssembly costs a few megabytes.
let stripper: StripTypes | undefined;
function loadStripper(): StripTypes {
  if (!stripper) {
    const amaro = createRequire(import.meta.url)('amaro') as { transformSync: StripTypes };
    stripper = amaro.transformSync;
  }
  return stripper;
}

export type Stripped = { ok: true; code: string } | { ok: false; message: string };

const MAX_MESSAGE_CHARS = 500;
const BODY_START = '(async () => {\n';
const BODY_END = '\n})';

/**
 * The script body as JavaScript: TypeScript annotations are replaced by blanks (positions in error messages
 * stay right); syntax that would need a real transform (enum, namespace) is refused, not compiled.
 */
export function stripTypes(body: string): Stripped {
  try {
    // Parsed as the body it will run as (so top-level `return` and `await` parse); blanking keeps every
    // position, so the body is the same slice of the output.
    const code = loadStripper()(`${BODY_START}${body}${BODY_END}`, { mode: 'strip-only' }).code;
    return { ok: true, code: code.slice(BODY_START.length, code.length - BODY_END.length) };
  } catch (error) {
    const message = describeError(error);
    return { ok: false, message: message.length > MAX_MESSAGE_CHARS ? `${message.slice(0, MAX_MESSAGE_CHARS)}…` : message };
  }
}

/** amaro throws plain objects: `{code, message, startLine, startColumn…}`. */
function describeError(error: unknown): string {
  if (typeof error !== 'object' || error === null) return String(error);
  const { message, startLine, startColumn } = error as { message?: unknown; startLine?: unknown; startColumn?: unknown };
  const text = typeof message === 'string' ? message : 'the script does not parse';
  return typeof startLine === 'number' && typeof startColumn === 'number' ? `${text} (line ${startLine - 1}, column ${startColumn})` : text;
}
