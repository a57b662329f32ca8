// The node flags the start's check child (src/snapshot/check-in-child.ts) takes from the gateway's own: those that
// decide how modules load or what the process may do (a loader or preloaded module the install needs, Yarn PnP's,
// the permission model, hardening), not those that would make a second debugger, profile, report, watcher or heap
// size beside the gateway's (an `--inspect` child fights the gateway for the debug port; a `--cpu-prof` one writes a
// second profile). The gateway's NODE_OPTIONS is read here and not handed on, so this list is all the child gets.

/** Flags kept with their value, written `--flag value` or `--flag=value`. */
const KEPT_WITH_VALUE = new Set(['--require', '-r', '--import', '--loader', '--experimental-loader', '--conditions', '-C', '--allow-fs-read', '--allow-fs-write', '--disable-warning', '--disable-proto', '--unhandled-rejections', '--openssl-config']);

/** Flags kept alone (no value). */
const KEPT_ALONE = new Set(['--preserve-symlinks', '--preserve-symlinks-main', '--enable-source-maps', '--no-deprecation', '--no-warnings', '--pending-deprecation', '--throw-deprecation', '--frozen-intrinsics', '--no-addons', '--permission', '--experimental-permission', '--allow-addons', '--allow-child-process', '--allow-wasi', '--allow-worker', '--use-openssl-ca', '--use-bundled-ca']);

/** Experimental features switched on or off (`--experimental-vm-modules`, `--no-experimental-strip-types`): module loading may depend on them. */
const EXPERIMENTAL = /^--(no-)?experimental-[a-z-]+$/;

/** Flags that take a value as the next word when written without `=`, so a dropped one drops its value too. */
const DROPPED_WITH_VALUE = new Set(['--inspect-port', '--debug-port', '--cpu-prof-dir', '--cpu-prof-name', '--cpu-prof-interval', '--heap-prof-dir', '--heap-prof-name', '--heap-prof-interval', '--diagnostic-dir', '--report-dir', '--report-directory', '--report-filename', '--report-signal', '--heapsnapshot-signal', '--heapsnapshot-near-heap-limit', '--title', '--env-file', '--env-file-if-exists', '--watch-path', '--eval', '-e', '--print', '-p', '--input-type', '--redirect-warnings', '--icu-data-dir', '--secure-heap', '--secure-heap-min', '--stack-trace-limit', '--test-name-pattern', '--test-reporter', '--test-reporter-destination', '--test-concurrency', '--test-shard', '--test-timeout', '--max-old-space-size', '--max-semi-space-size', '--stack-size']);

/** The child's node flags from the gateway's `execArgv` and `NODE_OPTIONS`, in the order node reads them (NODE_OPTIONS first). */
export function childNodeFlags(execArgv: readonly string[], nodeOptions: string | undefined): string[] {
  return [...keptFlags(splitNodeOptions(nodeOptions ?? '')), ...keptFlags(execArgv)];
}

function keptFlags(words: readonly string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < words.length; i += 1) {
    const word = words[i]!;
    const equals = word.indexOf('=');
    const name = word.startsWith('-') && equals > 0 ? word.slice(0, equals) : word;
    const valueFollows = name === word && i + 1 < words.length;
    if (KEPT_WITH_VALUE.has(name)) {
      kept.push(word);
      if (valueFollows) kept.push(words[(i += 1)]!);
    } else if (KEPT_ALONE.has(name) || EXPERIMENTAL.test(name)) {
      // `--experimental-loader` is matched above, with its value.
      kept.push(word);
    } else if (DROPPED_WITH_VALUE.has(name) && valueFollows && !words[i + 1]!.startsWith('-')) {
      i += 1;
    }
  }
  return kept;
}

/** NODE_OPTIONS split as node splits it: on spaces, a double-quoted part kept whole, `\` escaping inside quotes. */
export function splitNodeOptions(text: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i]!;
    if (quoted && char === '\\' && i + 1 < text.length) {
      word += text[(i += 1)];
    } else if (char === '"') {
      quoted = !quoted;
      inWord = true;
    } else if (char === ' ' && !quoted) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += char;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  return words;
}
