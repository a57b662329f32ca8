import { describe, expect, it } from 'vitest';
import { checkEgress, EGRESS_REFUSED, type Resolve } from '../../../src/egress/check-egress.js';
import { deniedRangeOf, embeddedIPv4 } from '../../../src/egress/address-ranges.js';
import { compileAllowlist } from '../../../src/egress/allowlist.js';

// Test hostnames resolve only through this table; nothing here ever reaches a real resolver.
const DNS: Record<string, string[]> = {
  'private.test': ['10.0.0.5'],
  'metadata.test': ['169.254.169.254'],
  'linklocal.test': ['169.254.10.1'],
  'home.test': ['192.168.1.20'],
  'v6loop.test': ['::1'],
  'public.test': ['93.184.216.34'],
  'public6.test': ['2606:2800:220:1:248:1893:25c8:1946'],
  'mixed.test': ['93.184.216.34', '10.0.0.5'],
  'mapped.test': ['::ffff:127.0.0.1'],
  'ula.test': ['fd12:3456::1'],
  'corp.test': ['10.1.2.3'],
  'corp-meta.test': ['169.254.169.254'],
};
const resolved: string[] = [];
const resolve: Resolve = async (host) => {
  resolved.push(host);
  const answer = DNS[host];
  if (!answer) throw Object.assign(new Error(`ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return answer;
};
const check = (url: string, allow: string[] = []) => checkEgress(url, { allow, resolve });

describe('checkEgress', () => {
  it.each([
    ['file:///etc/passwd', /scheme file:/],
    ['gopher://example.test:70/_x', /scheme gopher:/],
    ['ftp://public.test/x', /scheme ftp:/],
    ['data:text/plain,hello', /scheme data:/],
    ['javascript:alert(1)', /scheme javascript:/],
    ['not a url', /not valid/],
    ['', /missing/],
  ])('refuses %s', async (url, reason) => {
    const verdict = await check(url);
    expect(verdict).toMatchObject({ ok: false, code: 'TG_EGRESS_DENIED' });
    if (!verdict.ok) expect(verdict.reason).toMatch(reason);
  });

  it('refuses credentials in the URL', async () => {
    expect(await check('http://user:pw@public.test/')).toMatchObject({ ok: false, reason: expect.stringMatching(/credentials/) });
    expect(await check('http://user@public.test/')).toMatchObject({ ok: false });
  });

  it.each(['http://:@public.test/', 'http://@public.test/', 'http:@public.test/', 'https:\\\\:@public.test/', 'http://a@b@public.test/'])(
    'refuses the empty userinfo of %s before any DNS lookup',
    async (url) => {
      const before = resolved.length;
      expect(await check(url)).toMatchObject({ ok: false, code: 'TG_EGRESS_DENIED', reason: expect.stringMatching(/credentials/) });
      expect(resolved.length - before).toBe(0);
    },
  );

  it("keeps an '@' in the path, query or fragment", async () => {
    for (const url of ['http://public.test/@x', 'http://public.test?a=@', 'http://public.test#@']) {
      expect(await check(url), url).toMatchObject({ ok: true });
    }
  });

  it.each([
    ['http://127.0.0.1/', 'loopback'],
    ['http://127.9.9.9:8080/', 'loopback'],
    ['http://[::1]/', 'loopback'],
    ['http://0.0.0.0/', 'unspecified'],
    ['http://[::]/', 'unspecified'],
    ['http://10.1.1.1/', 'private'],
    ['http://172.16.0.1/', 'private'],
    ['http://172.31.255.255/', 'private'],
    ['http://192.168.0.1/', 'private'],
    ['http://[fc00::1]/', 'private'],
    ['http://169.254.169.254/latest/meta-data/', 'metadata'],
    ['http://[fd00:ec2::254]/', 'metadata'],
    ['http://169.254.1.1/', 'link-local'],
    ['http://[fe80::1]/', 'link-local'],
    ['http://100.64.0.1/', 'shared (CGNAT)'],
    ['http://100.100.100.200/', 'shared (CGNAT)'],
    ['http://224.0.0.1/', 'multicast'],
    ['http://[ff02::1]/', 'multicast'],
    ['http://255.255.255.255/', 'reserved'],
    ['http://[2001:db8::1]/', 'reserved'],
    // IPv4-mapped and NAT64 IPv6 reach the embedded IPv4 host.
    ['http://[::ffff:127.0.0.1]/', 'loopback'],
    ['http://[::ffff:7f00:1]/', 'loopback'],
    ['http://[::ffff:a9fe:a9fe]/', 'metadata'],
    ['http://[64:ff9b::10.0.0.1]/', 'private'],
    ['http://[::127.0.0.1]/', 'reserved'],
    // Odd IPv4 spellings: WHATWG URL normalises them to dotted form before the check.
    ['http://2130706433/', 'loopback'],
    ['http://0177.0.0.1/', 'loopback'],
    ['http://0x7f.0.0.1/', 'loopback'],
    ['http://0x7f000001/', 'loopback'],
    ['http://127.1/', 'loopback'],
    ['http://017700000001/', 'loopback'],
    ['http://0xa9.0xfe.0xa9.0xfe/', 'metadata'],
  ])('refuses the IP literal in %s (%s)', async (url, range) => {
    const verdict = await check(url);
    expect(verdict.ok).toBe(false);
    if (!verdict.ok) expect(verdict.reason).toContain(`a ${range} address`);
  });

  it.each([
    ['http://private.test/', 'private'],
    ['http://metadata.test/', 'metadata'],
    ['http://linklocal.test/', 'link-local'],
    ['http://home.test:8080/mcp', 'private'],
    ['http://v6loop.test/', 'loopback'],
    ['http://mapped.test/', 'loopback'],
    ['http://ula.test/', 'private'],
    ['https://PRIVATE.test./mcp', 'private'],
  ])('refuses %s after resolving it (%s), without echoing the address', async (url, range) => {
    const verdict = await check(url);
    expect(verdict.ok).toBe(false);
    if (!verdict.ok) {
      expect(verdict.reason).toContain(`resolves to a ${range} address`);
      expect(verdict.reason).not.toMatch(/\d+\.\d+\.\d+\.\d+|::/);
    }
  });

  it('refuses a host when any one of its addresses is private', async () => {
    expect(await check('http://mixed.test/')).toMatchObject({ ok: false, reason: expect.stringContaining('private') });
  });

  it('refuses a host that does not resolve', async () => {
    expect(await check('http://nowhere.test/')).toMatchObject({ ok: false, reason: expect.stringContaining('could not be resolved') });
  });

  it('accepts public hosts and returns every checked address for pinning', async () => {
    const verdict = await check('https://public.test/mcp?x=1');
    expect(verdict).toMatchObject({ ok: true, addresses: ['93.184.216.34'] });
    if (verdict.ok) expect(verdict.url.href).toBe('https://public.test/mcp?x=1');
    expect(await check('http://public6.test/')).toMatchObject({ ok: true, addresses: ['2606:2800:220:1:248:1893:25c8:1946'] });
    expect(await check('http://8.8.8.8/')).toMatchObject({ ok: true, addresses: ['8.8.8.8'] });
  });

  it('does not resolve IP literals', async () => {
    resolved.length = 0;
    await check('http://8.8.8.8/');
    await check('http://[::1]/');
    expect(resolved).toEqual([]);
  });

  it('lets allowlisted IPs and CIDRs through, and only those', async () => {
    expect(await check('http://127.0.0.1:9/', ['127.0.0.1'])).toMatchObject({ ok: true });
    expect(await check('http://127.0.0.2:9/', ['127.0.0.1'])).toMatchObject({ ok: false });
    expect(await check('http://[::ffff:127.0.0.1]/', ['127.0.0.1'])).toMatchObject({ ok: true });
    expect(await check('http://corp.test/', ['10.1.2.0/24'])).toMatchObject({ ok: true, addresses: ['10.1.2.3'] });
    expect(await check('http://private.test/', ['10.1.2.0/24'])).toMatchObject({ ok: false });
    expect(await check('http://[fd12:3456::9]/', ['fd12:3456::/32'])).toMatchObject({ ok: true });
    expect(await check('http://169.254.169.254/', ['169.254.169.254/32'])).toMatchObject({ ok: true });
  });

  it('lets an allowlisted hostname reach its private addresses but never a metadata address', async () => {
    expect(await check('http://CORP.test/', ['corp.test'])).toMatchObject({ ok: true });
    expect(await check('http://corp-meta.test/', ['corp-meta.test'])).toMatchObject({
      ok: false,
      reason: expect.stringContaining('metadata'),
    });
    // The hostname entry is exact: a sub-domain is not covered.
    expect(await check('http://x.corp.test/', ['corp.test'])).toMatchObject({ ok: false });
  });

  it('tells the caller one sentence for every refusal, so an answer is no DNS oracle; the reason is apart', async () => {
    const refused = ['http://v6loop.test/', 'http://nowhere.test/', 'http://private.test/', 'http://metadata.test/', 'http://127.0.0.1/', 'ftp://public.test/', 'http://u@public.test/'];
    const verdicts = await Promise.all(refused.map((url) => check(url)));
    expect(verdicts.map((verdict) => (verdict.ok ? 'allowed' : verdict.message))).toEqual(refused.map(() => EGRESS_REFUSED));
    // The detail still tells the log and the audit what happened, without the resolved address.
    expect(verdicts.map((verdict) => (verdict.ok ? '' : verdict.reason))).toEqual([
      'host v6loop.test resolves to a loopback address',
      'host nowhere.test could not be resolved',
      'host private.test resolves to a private address',
      'host metadata.test resolves to a metadata address',
      '127.0.0.1 is a loopback address',
      'scheme ftp: is not allowed (only http and https)',
      'credentials in the URL are not allowed (use headers)',
    ]);
  });

  it('refuses everything when the allowlist itself is malformed', async () => {
    expect(await check('http://public.test/', ['10.0.0.0/99'])).toMatchObject({ ok: false, reason: expect.stringContaining('CIDR') });
  });
});

describe('address ranges', () => {
  it('unwraps IPv4-mapped and NAT64 addresses in any spelling', () => {
    expect(embeddedIPv4('::ffff:127.0.0.1')).toBe('127.0.0.1');
    expect(embeddedIPv4('::ffff:7f00:1')).toBe('127.0.0.1');
    expect(embeddedIPv4('0:0:0:0:0:ffff:a9fe:a9fe')).toBe('169.254.169.254');
    expect(embeddedIPv4('64:ff9b::0a00:0005')).toBe('10.0.0.5');
    expect(embeddedIPv4('2001:db8::1')).toBeUndefined();
  });

  it('treats zone ids and non-addresses as off limits', () => {
    expect(deniedRangeOf('fe80::1%eth0')).toBe('link-local');
    expect(deniedRangeOf('not-an-ip')).toBe('reserved');
    expect(deniedRangeOf('1.1.1.1')).toBeUndefined();
  });

  it('rejects allowlist entries that are neither host, IP nor CIDR', () => {
    expect(() => compileAllowlist(['exa mple.com'])).toThrow(/exa mple.com/);
    expect(() => compileAllowlist(['10.0.0.0/33'])).toThrow(/CIDR/);
    expect(() => compileAllowlist(['::/129'])).toThrow(/CIDR/);
    expect(compileAllowlist(['Api.Example.com.']).hostAllowed('api.example.COM')).toBe(true);
  });
});
