// Instructions aimed at the model inside a tool result (docs/governance.md#detectors): phrases that try to
// replace the model's instructions, chat-template role tags, hidden text (zero-width, bidirectional
// controls, Unicode tag characters) and look-alikes of tool calls. Each signal has a weight; a rule fires
// when a text's summed score reaches its threshold. Findings are only ever flagged or blocked, never
// rewritten: a silent edit of what the model reads would hide the attack from the people reviewing it.
import { literalsMayOccur } from './census.js';
import { keywordFinder } from './text.js';
import type { Detector, Finding } from './types.js';

interface Signal {
  readonly literals: readonly string[];
  readonly weight: number;
  /** Followed within a few words by one of these (lower case), or always when absent. */
  readonly then?: readonly string[];
}

const OVERRIDE_OBJECTS = ['instruction', 'prompt', 'direction', 'rule', 'guideline', 'context', 'message'];

const SIGNALS: readonly Signal[] = [
  { literals: ['ignore all previous', 'ignore previous', 'ignore all prior', 'ignore prior', 'ignore the above', 'ignore all above', 'ignore your', 'ignore any previous'], weight: 0.6, then: OVERRIDE_OBJECTS },
  { literals: ['disregard all', 'disregard the', 'disregard previous', 'disregard prior', 'disregard your', 'disregard any'], weight: 0.6, then: OVERRIDE_OBJECTS },
  { literals: ['forget all', 'forget your', 'forget previous', 'forget the above', 'forget everything'], weight: 0.5, then: [...OVERRIDE_OBJECTS, 'you were told', 'above'] },
  { literals: ['new instructions:', 'updated instructions:', 'system override', 'developer mode', 'jailbreak'], weight: 0.5 },
  { literals: ['you are now ', 'from now on you ', 'from now on, you '], weight: 0.3 },
  { literals: ['do not tell the user', "don't tell the user", 'without telling the user', 'do not mention this', 'hide this from the user'], weight: 0.5 },
  { literals: ['reveal your system prompt', 'print your system prompt', 'show your system prompt', 'repeat your instructions', 'exfiltrate'], weight: 0.5 },
  // Chat-template role markers: text a tool returns has no business opening a turn.
  { literals: ['<|im_start|>', '<|im_end|>', '<|system|>', '<|assistant|>', '<|user|>', '<|start_header_id|>', '<|eot_id|>', '[inst]', '[/inst]', '<<sys>>', '<system>', '</system>', '<assistant>', '### system:', '### instruction:'], weight: 0.5 },
  { literals: ['\nsystem:', '\nassistant:', '\nhuman:'], weight: 0.3 },
  // Look-alikes of tool calls and their results, in the wire formats models are trained on.
  { literals: ['<tool_call>', '</tool_call>', '<function_calls>', '<invoke name=', '<tool_use>', '"tool_calls":', '"function_call":', '<|tool_call|>', '<function=', '[tool_calls]'], weight: 0.5 },
];

/** Each phrase's signal, by the phrase (lower case). */
const SIGNAL_OF = new Map<string, Signal>(SIGNALS.flatMap((signal) => signal.literals.map((literal) => [literal, signal] as const)));
// Searched in the lower-cased text with a case-sensitive finder (about 2.5 times faster than V8's
// case-insensitive alternation). Lower-casing may change the length of a few non-ASCII letters, shifting
// positions after them: harmless here, since injection findings are only counted and scored, never rewritten.
const findPhrase = keywordFinder([...SIGNAL_OF.keys()]);
/** How far after a phrase its object may come ("ignore all the previous system instructions"). */
const OBJECT_WINDOW = 48;

function phrases(text: string, out: Finding[]): void {
  const lower = text.toLowerCase();
  // A phrase found is skipped whole (with its object); one without its object is not a finding.
  findPhrase(lower, (index, literal) => {
    const signal = SIGNAL_OF.get(literal)!;
    let end = index + literal.length;
    if (signal.then) {
      const after = lower.slice(end, end + OBJECT_WINDOW);
      const object = signal.then.map((word) => after.indexOf(word)).filter((found) => found >= 0);
      if (object.length === 0) return undefined;
      end += Math.min(...object);
    }
    out.push({ kind: 'injection', start: index, end, weight: signal.weight });
    return end;
  });
}

/**
 * Hidden text: zero-width characters inside words, bidirectional overrides, and Unicode tag characters
 * (U+E0000 to U+E007F, invisible ASCII look-alikes), found with one character class (no quantifier).
 */
const HIDDEN = /[\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]|\uDB40[\uDC00-\uDC7F]/g;

function hiddenText(text: string, out: Finding[]): void {
  let count = 0;
  let first = -1;
  let last = -1;
  HIDDEN.lastIndex = 0;
  for (let hit = HIDDEN.exec(text); hit !== null; hit = HIDDEN.exec(text)) {
    const at = hit.index;
    const c = text.charCodeAt(at);
    // A byte-order mark at the very start is ordinary; a zero-width joiner inside an emoji sequence (after a
    // surrogate or a variation selector) is how emoji are written.
    if (c === 0xfeff && at === 0) continue;
    const before = text.charCodeAt(at - 1);
    if (c === 0x200d && ((before >= 0xdc00 && before <= 0xdfff) || before === 0xfe0f)) continue;
    count += 1;
    if (first < 0) first = at;
    last = at + hit[0].length;
  }
  // One stray zero-width character is common in pasted text; several are text meant to be unseen.
  if (count >= 3) out.push({ kind: 'injection', start: first, end: last, weight: Math.min(0.8, 0.2 + count * 0.05) });
}

const mayHoldPhrase = literalsMayOccur([...SIGNAL_OF.keys()]);

export const INJECTION_DETECTORS: readonly Detector[] = [
  // Gate (census.ts): a phrase's character pairs; any character past ASCII lets the phrases run, since
  // lower-casing one may give ASCII letters (`K`, the Kelvin sign, gives `k`).
  { name: 'injection_phrases', group: 'injection', kinds: ['injection'], find: phrases, gate: (census) => census.nonAscii || mayHoldPhrase(census) },
  // Every hidden character lies past ASCII.
  { name: 'hidden_text', group: 'injection', kinds: ['injection'], find: hiddenText, gate: (census) => census.nonAscii },
];

/** The score of a text's injection findings: their weights summed, at most 1. */
export function injectionScore(findings: readonly Finding[]): number {
  let score = 0;
  for (const finding of findings) if (finding.kind === 'injection') score += finding.weight ?? 0;
  return Math.min(1, Math.round(score * 100) / 100);
}
