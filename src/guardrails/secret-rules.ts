// The built-in secret rules: tokens that announce themselves by a fixed prefix followed by runs of a
// character class. The selection and the shapes follow the public rule catalogues of secretlint
// (`@secretlint/secretlint-rule-preset-recommend`, MIT) and gitleaks (MIT) — written anew here as data,
// not copied: each rule's `re2` is the RE2 pattern it is equivalent to (test/unit/guardrails checks the
// two agree on the corpus), and the matcher below runs the shape directly, without backtracking.
import { charClass, type CharClass } from './text.js';

/** A run of `chars`, `min` to `max` long (greedy; the next segment never starts with one of `chars`). */
export interface Run {
  readonly chars: CharClass;
  readonly min: number;
  readonly max: number;
}

export interface SecretRule {
  readonly kind: string;
  /** Literal prefixes that start a token (also the keywords that trigger the rule). */
  readonly prefixes: readonly string[];
  /** What follows the prefix: runs and literal strings, in order. */
  readonly body: ReadonlyArray<Run | string>;
  /** The rule as an RE2 pattern (documentation and the equivalence test). */
  readonly re2: string;
  /** An extra test of the whole token (e.g. a marker it must contain). */
  readonly check?: (token: string) => boolean;
}

const run = (ranges: string, min: number, max = min): Run => ({ chars: charClass(ranges), min, max });
const B62 = 'A-Za-z0-9';
const B64URL = 'A-Za-z0-9_-';

export const SECRET_RULES: readonly SecretRule[] = [
  {
    kind: 'aws_access_key',
    prefixes: ['AKIA', 'ASIA', 'ABIA', 'ACCA', 'AGPA', 'AIDA', 'AROA', 'AIPA', 'ANPA', 'ANVA', 'APKA'],
    body: [run('A-Z2-7', 16)],
    re2: '(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[A-Z2-7]{16}',
  },
  { kind: 'github_token', prefixes: ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_'], body: [run(B62, 36)], re2: 'gh[pousr]_[A-Za-z0-9]{36}' },
  { kind: 'github_token', prefixes: ['github_pat_'], body: [run(`${B62}_`, 82)], re2: 'github_pat_[A-Za-z0-9_]{82}' },
  { kind: 'gitlab_token', prefixes: ['glpat-', 'gldt-', 'glrt-'], body: [run(B64URL, 20)], re2: 'gl(?:pat|dt|rt)-[A-Za-z0-9_-]{20}' },
  { kind: 'slack_token', prefixes: ['xoxb-', 'xoxa-', 'xoxp-', 'xoxr-', 'xoxs-', 'xoxe-'], body: [run(`${B62}-`, 10, 250)], re2: 'xox[baprse]-[A-Za-z0-9-]{10,250}' },
  {
    kind: 'slack_webhook',
    prefixes: ['https://hooks.slack.com/services/'],
    body: ['T', run('A-Z0-9', 8, 12), '/B', run('A-Z0-9', 8, 12), '/', run(B62, 24)],
    re2: 'https://hooks\\.slack\\.com/services/T[A-Z0-9]{8,12}/B[A-Z0-9]{8,12}/[A-Za-z0-9]{24}',
  },
  { kind: 'stripe_key', prefixes: ['sk_live_', 'rk_live_', 'sk_test_', 'rk_test_'], body: [run(B62, 24, 99)], re2: '[rs]k_(?:live|test)_[A-Za-z0-9]{24,99}' },
  { kind: 'google_api_key', prefixes: ['AIza'], body: [run(B64URL, 35)], re2: 'AIza[A-Za-z0-9_-]{35}' },
  { kind: 'npm_token', prefixes: ['npm_'], body: [run(B62, 36)], re2: 'npm_[A-Za-z0-9]{36}' },
  {
    kind: 'anthropic_api_key',
    prefixes: ['sk-ant-api', 'sk-ant-admin'],
    body: [run('0-9', 2), '-', run(B64URL, 80, 120)],
    re2: 'sk-ant-(?:api|admin)[0-9]{2}-[A-Za-z0-9_-]{80,120}',
  },
  // Project, service-account and admin keys, and the older 48-character keys (which carry `T3BlbkFJ`).
  { kind: 'openai_api_key', prefixes: ['sk-proj-', 'sk-svcacct-', 'sk-admin-'], body: [run(B64URL, 40, 200)], re2: 'sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,200}' },
  { kind: 'openai_api_key', prefixes: ['sk-'], body: [run(B62, 48)], re2: 'sk-[A-Za-z0-9]{48}', check: (token) => token.includes('T3BlbkFJ') },
  { kind: 'sendgrid_api_key', prefixes: ['SG.'], body: [run(B64URL, 22), '.', run(B64URL, 43)], re2: 'SG\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{43}' },
  { kind: 'shopify_token', prefixes: ['shpat_', 'shpca_', 'shppa_', 'shpss_'], body: [run('a-fA-F0-9', 32)], re2: 'shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}' },
  { kind: 'azure_storage_key', prefixes: ['AccountKey='], body: [run('A-Za-z0-9+/', 86), '=='], re2: 'AccountKey=[A-Za-z0-9+/]{86}==' },
  { kind: 'huggingface_token', prefixes: ['hf_'], body: [run('A-Za-z', 34)], re2: 'hf_[A-Za-z]{34}' },
  {
    kind: 'jwt',
    prefixes: ['eyJ'],
    body: [run(B64URL, 8, 4096), '.eyJ', run(B64URL, 8, 8192), '.', run(B64URL, 0, 4096)],
    re2: 'eyJ[A-Za-z0-9_-]{8,}\\.eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]*',
  },
];
