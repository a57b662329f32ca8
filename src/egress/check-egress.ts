// The egress check for user-supplied URLs (docs/security-model.md#egress), as a pure-ish function whose
// verdict is data (the MCP SDK's allowedMethods style): the caller turns a refusal into a 400
// TG_EGRESS_DENIED, a failed connection, or a log line — always with the one wording, the reason apart. Only the DNS lookup has a side effect,
// and it is injectable so tests never touch a real resolver.
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { deniedRangeOf } from './address-ranges.js';
import { compileAllowlist, normalizeHostname, type EgressAllowlist } from './allowlist.js';

export type Resolve = (hostname: string) => Promise<string[]>;

export interface EgressOptions {
  /** Hostnames, IPs or CIDRs (`egress.allow`) that may be reached even when private. */
  allow: readonly string[];
  /** DNS resolution; default `dns.promises.lookup(host, {all: true})`. */
  resolve?: Resolve;
}

/**
 * What a caller hears about every egress refusal, whatever the reason: one sentence, so no answer tells
 * whether an internal name resolves or to which kind of address (docs/security-model.md#egress). The
 * verdict's `reason` says why, for the log and the audit only.
 */
export const EGRESS_REFUSED = 'URL refused by the egress policy';

export type EgressVerdict =
  | { ok: true; url: URL; addresses: string[] }
  | { ok: false; code: 'TG_EGRESS_DENIED'; message: typeof EGRESS_REFUSED; reason: string };

export const MAX_URL_LENGTH = 2048;
const ALLOWED_PROTOCOLS = new Set(['http:', 'https:']);

const defaultResolve: Resolve = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);

// The allowlist is compiled once per config array (config objects are replaced, never mutated, on reload).
const compiled = new WeakMap<readonly string[], EgressAllowlist>();
function allowlistOf(allow: readonly string[]): EgressAllowlist {
  let list = compiled.get(allow);
  if (!list) {
    list = compileAllowlist(allow);
    compiled.set(allow, list);
  }
  return list;
}

const deny = (reason: string): EgressVerdict => ({ ok: false, code: 'TG_EGRESS_DENIED', message: EGRESS_REFUSED, reason });

/** The raw authority: after the scheme and any run of slashes or backslashes, up to the path, query or fragment. */
function authorityOf(url: string): string {
  const afterScheme = url.slice(url.indexOf(':') + 1).replace(/^[/\\]*/, '');
  const end = afterScheme.search(/[/\\?#]/);
  return end === -1 ? afterScheme : afterScheme.slice(0, end);
}

/**
 * Decides whether `url` may be fetched on a user's behalf. Every address the hostname resolves to
 * must pass (one private answer among public ones is enough to refuse: a rebinding resolver picks
 * its answer per connection). The addresses returned are the ones checked; connect only to them.
 */
export async function checkEgress(url: string, options: EgressOptions): Promise<EgressVerdict> {
  if (typeof url !== 'string' || url.length === 0 || url.length > MAX_URL_LENGTH) return deny('URL is missing or too long');
  // Refused on the raw text, before any parsing or lookup: the URL parser reports `http://:@host/` (and
  // `http:@host/`) as having no credentials, yet a userinfo separator in the authority is never legitimate here.
  if (authorityOf(url).includes('@')) return deny('credentials in the URL are not allowed (use headers)');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return deny('URL is not valid');
  }
  if (!ALLOWED_PROTOCOLS.has(parsed.protocol)) return deny(`scheme ${parsed.protocol} is not allowed (only http and https)`);
  if (parsed.username !== '' || parsed.password !== '') return deny('credentials in the URL are not allowed (use headers)');

  // WHATWG URL has already turned decimal/octal/hex IPv4 spellings (2130706433, 0177.0.0.1, 0x7f.1)
  // into dotted form, so the IP literal test below sees the real address.
  const hostname = normalizeHostname(parsed.hostname);
  if (hostname === '') return deny('URL has no host');
  let allowlist: EgressAllowlist;
  try {
    allowlist = allowlistOf(options.allow);
  } catch (error) {
    return deny((error as Error).message);
  }

  let addresses: string[];
  if (isIP(hostname) !== 0) {
    addresses = [hostname];
  } else {
    try {
      addresses = [...new Set(await (options.resolve ?? defaultResolve)(hostname))];
    } catch {
      return deny(`host ${hostname} could not be resolved`);
    }
    if (addresses.length === 0) return deny(`host ${hostname} could not be resolved`);
  }

  const hostListed = allowlist.hostAllowed(hostname);
  for (const address of addresses) {
    if (allowlist.addressAllowed(address)) continue;
    const range = deniedRangeOf(address);
    if (range === undefined) continue;
    // A listed hostname vouches for its private addresses, but never for a cloud metadata
    // endpoint: that takes an explicit IP/CIDR entry, so a hijacked DNS record cannot reach it.
    if (hostListed && range !== 'metadata') continue;
    // Only for the log and the audit; even there the resolved address itself is left out.
    return deny(
      addresses.length === 1 && addresses[0] === hostname
        ? `${hostname} is a ${range} address`
        : `host ${hostname} resolves to a ${range} address`,
    );
  }
  return { ok: true, url: parsed, addresses };
}
