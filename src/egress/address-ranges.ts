// Which IP addresses a user-supplied URL may never reach by default. One table, one BlockList per
// reason, so a refusal can say *why* (loopback, private, metadata…) without echoing the address.
import { BlockList, isIP } from 'node:net';

export type DeniedRange =
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'metadata'
  | 'shared (CGNAT)'
  | 'multicast'
  | 'reserved';

type Rule = readonly [DeniedRange, string, number];

// Order matters: the first matching reason is reported ("metadata" before "link-local").
const RULES: readonly Rule[] = [
  ['metadata', '169.254.169.254', 32],
  ['metadata', 'fd00:ec2::254', 128],
  ['unspecified', '0.0.0.0', 8],
  ['unspecified', '::', 128],
  ['loopback', '127.0.0.0', 8],
  ['loopback', '::1', 128],
  ['private', '10.0.0.0', 8],
  ['private', '172.16.0.0', 12],
  ['private', '192.168.0.0', 16],
  ['private', 'fc00::', 7],
  ['link-local', '169.254.0.0', 16],
  ['link-local', 'fe80::', 10],
  ['link-local', 'fec0::', 10], // deprecated site-local
  ['shared (CGNAT)', '100.64.0.0', 10],
  ['multicast', '224.0.0.0', 4],
  ['multicast', 'ff00::', 8],
  ['reserved', '192.0.0.0', 24], // IETF protocol assignments
  ['reserved', '192.0.2.0', 24], // TEST-NET-1
  ['reserved', '192.88.99.0', 24], // 6to4 relay anycast
  ['reserved', '198.18.0.0', 15], // benchmarking
  ['reserved', '198.51.100.0', 24], // TEST-NET-2
  ['reserved', '203.0.113.0', 24], // TEST-NET-3
  ['reserved', '240.0.0.0', 4], // class E and 255.255.255.255
  ['reserved', '::', 96], // IPv4-compatible (deprecated) — ::127.0.0.1 must not slip through
  ['reserved', '64:ff9b:1::', 48], // local-use NAT64
  ['reserved', '100::', 64], // discard-only
  ['reserved', '2001::', 23], // IETF assignments incl. Teredo (embeds an obfuscated IPv4)
  ['reserved', '2001:db8::', 32], // documentation
  ['reserved', '2002::', 16], // 6to4 (embeds an arbitrary IPv4)
];

const LISTS: ReadonlyArray<readonly [DeniedRange, BlockList]> = (() => {
  const byReason = new Map<DeniedRange, BlockList>();
  for (const [reason, network, prefix] of RULES) {
    const list = byReason.get(reason) ?? new BlockList();
    list.addSubnet(network, prefix, isIP(network) === 6 ? 'ipv6' : 'ipv4');
    byReason.set(reason, list);
  }
  return [...byReason];
})();

/** The 8 16-bit groups of an IPv6 address (dotted IPv4 tail and `::` expanded), or undefined. */
function ipv6Groups(address: string): number[] | undefined {
  if (isIP(address) !== 6) return undefined;
  let text = address.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1].split('.').map(Number);
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const parse = (part: string | undefined): number[] => (part ? part.split(':').map((group) => Number.parseInt(group, 16)) : []);
  const left = parse(head);
  const right = parse(tail);
  const zeros = tail === undefined ? [] : new Array<number>(8 - left.length - right.length).fill(0);
  const groups = [...left, ...zeros, ...right];
  return groups.length === 8 ? groups : undefined;
}

/**
 * The IPv4 address carried inside an IPv4-mapped (`::ffff:a.b.c.d`, any spelling) or NAT64
 * (`64:ff9b::/96`) IPv6 address; such an address reaches that IPv4 host, so it is judged as one.
 */
export function embeddedIPv4(address: string): string | undefined {
  const groups = ipv6Groups(address);
  if (!groups) return undefined;
  const mapped = groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff;
  const nat64 = groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((group) => group === 0);
  if (!mapped && !nat64) return undefined;
  return [groups[6] >> 8, groups[6] & 0xff, groups[7] >> 8, groups[7] & 0xff].join('.');
}

/** Strips brackets and a zone id, and unwraps an embedded IPv4; undefined when not an IP literal. */
export function normalizeAddress(address: string): string | undefined {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const family = isIP(bare);
  if (family === 4) return bare;
  if (family !== 6) return undefined;
  return embeddedIPv4(bare) ?? bare.toLowerCase();
}

/** Why this address is off limits by default, or undefined when it looks globally routable. */
export function deniedRangeOf(address: string): DeniedRange | undefined {
  // An IPv6 zone id (fe80::1%eth0) only exists for link-local scopes.
  if (address.includes('%')) return 'link-local';
  const normalized = normalizeAddress(address);
  if (!normalized) return 'reserved';
  const type = isIP(normalized) === 6 ? 'ipv6' : 'ipv4';
  for (const [reason, list] of LISTS) if (list.check(normalized, type)) return reason;
  return undefined;
}
