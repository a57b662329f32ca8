// The operator's egress allowlist (`egress.allow`): exact hostnames, IP addresses and CIDRs that
// user-supplied URLs may reach even though they are private. Compiled once per config.
import { BlockList, isIP } from 'node:net';
import { normalizeAddress } from './address-ranges.js';

export interface EgressAllowlist {
  /** True when the exact hostname (case-insensitive, trailing dot ignored) is listed. */
  hostAllowed(hostname: string): boolean;
  /** True when the address is listed or inside a listed CIDR. */
  addressAllowed(address: string): boolean;
}

export function normalizeHostname(hostname: string): string {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return bare.toLowerCase().replace(/\.$/, '');
}

const HOSTNAME = /^(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]{0,62})(?:\.[a-z0-9_](?:[a-z0-9_-]{0,62}))*$/;

/** Builds the matcher; throws a TypeError naming the bad entry (config validation fails fast). */
export function compileAllowlist(entries: readonly string[]): EgressAllowlist {
  const hosts = new Set<string>();
  const addresses = new BlockList();
  for (const entry of entries) {
    const text = String(entry).trim();
    const slash = text.indexOf('/');
    if (slash >= 0) {
      const network = normalizeAddress(text.slice(0, slash));
      const prefixText = text.slice(slash + 1);
      const family = network ? isIP(network) : 0;
      const prefix = /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : Number.NaN;
      if (!network || !(prefix >= 0 && prefix <= (family === 4 ? 32 : 128))) {
        throw new TypeError(`egress.allow: "${entry}" is not a valid CIDR`);
      }
      addresses.addSubnet(network, prefix, family === 4 ? 'ipv4' : 'ipv6');
      continue;
    }
    const address = normalizeAddress(text);
    if (address) {
      addresses.addAddress(address, isIP(address) === 4 ? 'ipv4' : 'ipv6');
      continue;
    }
    const host = normalizeHostname(text);
    if (!HOSTNAME.test(host)) throw new TypeError(`egress.allow: "${entry}" is not a hostname, IP address or CIDR`);
    hosts.add(host);
  }
  return {
    hostAllowed: (hostname) => hosts.has(normalizeHostname(hostname)),
    addressAllowed: (address) => {
      const normalized = normalizeAddress(address);
      return normalized !== undefined && addresses.check(normalized, isIP(normalized) === 4 ? 'ipv4' : 'ipv6');
    },
  };
}
