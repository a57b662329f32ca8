// The secret detectors (docs/governance.md#detectors): the prefixed tokens of secret-rules.ts, private
// keys, credentials in URLs and connection strings, bearer tokens, and generic high-entropy assignments
// (`password = "…"`). Each is a keyword hit followed by a bounded, forward-only read: linear in the text.
import { literalsMayOccur } from './census.js';
import { SECRET_RULES, type SecretRule } from './secret-rules.js';
import { ALNUM, boundaryBefore, charClass, entropy, inClass, keywordFinder, runOf } from './text.js';
import type { Detector, Finding } from './types.js';

/** The end of `rule`'s token starting at `start` (its prefix `prefix` already matched), or -1. */
function matchRule(text: string, start: number, prefix: string, rule: SecretRule): number {
  let at = start + prefix.length;
  let last: SecretRule['body'][number] | undefined;
  for (const segment of rule.body) {
    if (typeof segment === 'string') {
      if (!text.startsWith(segment, at)) return -1;
      at += segment.length;
    } else {
      const n = runOf(text, at, segment.chars, segment.max);
      if (n < segment.min) return -1;
      at += n;
    }
    last = segment;
  }
  // The token ends here: one more character of its last run (or a letter or digit) means a longer word.
  if (at < text.length) {
    const next = text.charCodeAt(at);
    if (typeof last === 'object' ? inClass(last.chars, next) : inClass(ALNUM, next)) return -1;
  }
  if (rule.check && !rule.check(text.slice(start, at))) return -1;
  return at;
}

const rulesByPrefix = new Map<string, SecretRule[]>();
for (const rule of SECRET_RULES) for (const prefix of rule.prefixes) rulesByPrefix.set(prefix, [...(rulesByPrefix.get(prefix) ?? []), rule]);
const findPrefixed = keywordFinder([...rulesByPrefix.keys()]);

function prefixedTokens(text: string, out: Finding[]): void {
  findPrefixed(text, (index, prefix) => {
    if (!boundaryBefore(text, index)) return;
    for (const rule of rulesByPrefix.get(prefix)!) {
      const end = matchRule(text, index, prefix, rule);
      if (end > 0) {
        out.push({ kind: rule.kind, start: index, end });
        return end;
      }
    }
    return undefined;
  });
}

const KEY_HEADER = charClass('A-Z0-9 ');
const PEM_BODY = charClass('A-Za-z0-9+/=\\ \t\r\n:-,.');
const MAX_PEM_CHARS = 16_384;
const findPem = keywordFinder(['-----BEGIN ']);

/** PEM private keys, PGP private key blocks included: header to footer, or to the end of the base64 body. */
function privateKeys(text: string, out: Finding[]): void {
  findPem(text, (index) => {
    const label = index + '-----BEGIN '.length;
    const n = runOf(text, label, KEY_HEADER, 40);
    const header = text.slice(label, label + n);
    if (!/PRIVATE KEY(?: BLOCK)?$/.test(header) || !text.startsWith('-----', label + n)) return undefined;
    const bodyStart = label + n + 5;
    const footer = text.indexOf('-----END ', bodyStart);
    let end: number;
    if (footer >= 0 && footer - bodyStart <= MAX_PEM_CHARS) {
      const close = text.indexOf('-----', footer + 9);
      end = close >= 0 && close - footer < 64 ? close + 5 : footer + 9;
    } else {
      // A key cut short (or past the bound): everything that still looks like its body goes with it.
      end = bodyStart + runOf(text, bodyStart, PEM_BODY, MAX_PEM_CHARS);
    }
    out.push({ kind: 'private_key', start: index, end });
    return end;
  });
}

const DB_SCHEMES = new Set(['postgres', 'postgresql', 'mysql', 'mariadb', 'mongodb', 'mongodb+srv', 'redis', 'rediss', 'amqp', 'amqps', 'mssql', 'sqlserver', 'jdbc:postgresql', 'jdbc:mysql']);
const SCHEME = charClass('a-zA-Z0-9+.:');
const USERINFO = charClass("A-Za-z0-9._~!$&'()*+,;=%-");
const PASSWORD = charClass("A-Za-z0-9._~!$&'()*+,;=%:-");
const PLACEHOLDERS = /^(?:\*+|x+|\.+|password|passwd|pass|secret|changeme|<[^>]*>|\$\{[^}]*\}|\{\{[^}]*\}\}|%s|\$[A-Z_]+)$/i;
const findScheme = keywordFinder(['://']);

/** `scheme://user:password@host`: the password is the finding (a connection string for databases and brokers). */
function urlCredentials(text: string, out: Finding[]): void {
  // No `@`, no userinfo: most texts with URLs are passed over without reading one of them (indexOf first:
  // V8's forward search is several times faster than lastIndexOf, which is only needed once there is an `@`).
  if (text.indexOf('@') < 0) return;
  const lastAt = text.lastIndexOf('@');
  findScheme(text, (index) => {
    if (index > lastAt) return text.length;
    let s = index;
    while (s > 0 && index - s < 20 && inClass(SCHEME, text.charCodeAt(s - 1))) s -= 1;
    const scheme = text.slice(s, index).toLowerCase();
    const user = index + 3;
    const u = runOf(text, user, USERINFO, 128);
    if (text.charCodeAt(user + u) !== 58) return undefined; // ':'
    const pass = user + u + 1;
    const p = runOf(text, pass, PASSWORD, 256);
    if (p === 0 || text.charCodeAt(pass + p) !== 64) return undefined; // '@'
    const password = text.slice(pass, pass + p);
    if (PLACEHOLDERS.test(password)) return pass + p;
    out.push({ kind: DB_SCHEMES.has(scheme) ? 'connection_string' : 'url_credentials', start: pass, end: pass + p });
    return pass + p;
  });
}

const TOKEN68 = charClass('A-Za-z0-9._~+/=-');
const findBearer = keywordFinder(['bearer '], true);

/** `Bearer <token>` (an echoed Authorization header): the token is the finding. */
function bearerTokens(text: string, out: Finding[]): void {
  findBearer(text, (index) => {
    const start = index + 7;
    const n = runOf(text, start, TOKEN68, 4096);
    const token = text.slice(start, start + n);
    // Prose ("bearer of the card") has no long token; a JWT is reported by its own rule.
    if (n < 20 || token.startsWith('eyJ') || entropy(token) < 3.5) return undefined;
    out.push({ kind: 'bearer_token', start, end: start + n });
    return start + n;
  });
}

const ASSIGN_KEYWORDS = ['password', 'passwd', 'pwd', 'secret', 'token', 'api_key', 'apikey', 'api-key', 'access_key', 'accesskey', 'auth_key', 'private_key', 'client_secret', 'credentials'];
// Anchors: each keyword holds one; a text without any (most of them) is passed over by one quick search.
const findAssignment = keywordFinder(ASSIGN_KEYWORDS, true, ['pass', 'pwd', 'secret', 'token', 'key', 'credential']);
const KEY_TAIL = charClass('A-Za-z0-9_.-');
const VALUE = charClass('A-Za-z0-9+/=_.~!@#$%^&*?:-');
const MIN_GENERIC_CHARS = 12;
const MIN_GENERIC_ENTROPY = 3.5;

/** Character classes among lower, upper, digit and other: a random secret mixes at least two. */
function classCount(value: string): number {
  let lower = 0, upper = 0, digit = 0, other = 0;
  for (let i = 0; i < value.length; i += 1) {
    const c = value.charCodeAt(i);
    if (c >= 97 && c <= 122) lower = 1;
    else if (c >= 65 && c <= 90) upper = 1;
    else if (c >= 48 && c <= 57) digit = 1;
    else other = 1;
  }
  return lower + upper + digit + other;
}

/** `password = "…"`, `"api_key": "…"`, `SECRET_TOKEN=…`: a high-entropy value assigned to a secret-named key. */
/** Key names that hold something about a secret, not the secret (`password_reset_url`, `token_count`). */
const NOT_A_SECRET_KEY = /(?:url|uri|id|ids|count|len|length|type|name|file|path|field|hint|policy|expires|expiry|expires_at|at|ttl|limit|endpoint|header|prefix)$/i;

function genericAssignments(text: string, out: Finding[]): void {
  findAssignment(text, (index, keyword) => {
    let at = index + keyword.length;
    const tail = runOf(text, at, KEY_TAIL, 32);
    if (tail > 0 && NOT_A_SECRET_KEY.test(text.slice(at, at + tail))) return undefined;
    at += tail;
    if (text[at] === '"' || text[at] === "'") at += 1;
    while (text[at] === ' ' || text[at] === '\t') at += 1;
    if (text[at] === ':' || text[at] === '=') at += text[at + 1] === '>' ? 2 : 1;
    else return undefined;
    while (text[at] === ' ' || text[at] === '\t') at += 1;
    if (text[at] === '"' || text[at] === "'") at += 1;
    const n = runOf(text, at, VALUE, 256);
    const value = text.slice(at, at + n);
    if (n < MIN_GENERIC_CHARS || PLACEHOLDERS.test(value) || /^https?:/i.test(value) || classCount(value) < 2 || entropy(value) < MIN_GENERIC_ENTROPY) return undefined;
    out.push({ kind: 'generic_secret', start: at, end: at + n });
    return at + n;
  });
}

// Gates (census.ts): the pairs of characters each detector's keywords need.
const mayHoldPrefix = literalsMayOccur([...rulesByPrefix.keys()]);
const mayHoldPem = literalsMayOccur(['-----BEGIN ']);
const mayHoldScheme = literalsMayOccur(['://']);
const mayHoldBearer = literalsMayOccur(['bearer ']);
const mayHoldAssignKeyword = literalsMayOccur(ASSIGN_KEYWORDS);

export const SECRET_DETECTORS: readonly Detector[] = [
  {
    name: 'prefixed_tokens',
    group: 'secrets',
    kinds: [...new Set(SECRET_RULES.map((rule) => rule.kind))],
    find: prefixedTokens,
    gate: mayHoldPrefix,
  },
  { name: 'private_key', group: 'secrets', kinds: ['private_key'], find: privateKeys, gate: mayHoldPem },
  { name: 'url_credentials', group: 'secrets', kinds: ['connection_string', 'url_credentials'], find: urlCredentials, gate: (census) => census.at && mayHoldScheme(census) },
  { name: 'bearer_token', group: 'secrets', kinds: ['bearer_token'], find: bearerTokens, gate: mayHoldBearer },
  // A key name, then `:` or `=` (the value is assigned).
  { name: 'generic_secret', group: 'secrets', kinds: ['generic_secret'], find: genericAssignments, gate: (census) => census.assignment && mayHoldAssignKeyword(census) },
];
