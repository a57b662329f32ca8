import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkEgress, EGRESS_REFUSED, type Resolve } from '../../../src/egress/check-egress.js';
import { createPinnedFetch, EgressDeniedError, RequestNotSentError } from '../../../src/egress/pinned-fetch.js';
import { installLoopbackGuard, type LoopbackGuard } from '../../helpers/loopback-guard.js';

let server: Server;
let port: number;
let guard: LoopbackGuard;
const seenHosts: string[] = [];

beforeAll(async () => {
  guard = installLoopbackGuard();
  server = createServer((req, res) => {
    seenHosts.push(req.headers.host ?? '');
    if (req.url === '/redirect') {
      res.writeHead(302, { location: `http://127.0.0.2:${port}/` }).end();
      return;
    }
    res.end('hello');
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise((done) => server.close(done));
  guard.uninstall();
});

function causeOf(error: unknown): unknown {
  return (error as { cause?: unknown }).cause;
}

describe('pinned fetch', () => {
  it('fails a request it cannot build with a RequestNotSentError cause, without dialling (nothing says the upstream is unwell)', async () => {
    const pinned = createPinnedFetch({ allow: ['127.0.0.1'], resolve: async () => ['127.0.0.1'] });
    const before = seenHosts.length;
    try {
      // \u2028 is no byte: the WHATWG Headers refuse it. \x01 is a byte node:http refuses to send.
      for (const value of ['é\u2028', 'a\x01b']) {
        const error = await pinned.fetch(`http://pinned.test:${port}/`, { headers: { 'x-tag': value } }).catch((failure: unknown) => failure);
        expect(error).toBeInstanceOf(TypeError);
        expect(causeOf(error)).toBeInstanceOf(RequestNotSentError);
      }
      expect(seenHosts.length).toBe(before);
    } finally {
      pinned.close();
    }
  });

  it('connects to the checked address while keeping the hostname in the Host header', async () => {
    const pinned = createPinnedFetch({ allow: ['127.0.0.1'], resolve: async () => ['127.0.0.1'] });
    try {
      const response = await pinned.fetch(`http://pinned.test:${port}/`);
      expect(await response.text()).toBe('hello');
      expect(seenHosts.at(-1)).toBe(`pinned.test:${port}`);
    } finally {
      pinned.close();
    }
  });

  it('re-checks at connect time, so a rebinding resolver cannot swap in a private address', async () => {
    let calls = 0;
    // First answer public (passes registration), every later answer private.
    const rebinding: Resolve = async () => (calls++ === 0 ? ['93.184.216.34'] : ['10.0.0.5']);
    const options = { allow: [] as string[], resolve: rebinding };
    expect(await checkEgress(`http://rebind.test:${port}/`, options)).toMatchObject({ ok: true });
    const pinned = createPinnedFetch(options);
    const dialledBefore = guard.dialled.length;
    try {
      const error = await pinned.fetch(`http://rebind.test:${port}/`).then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect(causeOf(error)).toBeInstanceOf(EgressDeniedError);
      expect((causeOf(error) as EgressDeniedError).reason).toContain('private');
      expect((causeOf(error) as EgressDeniedError).message).toBe(EGRESS_REFUSED);
      expect(guard.dialled.length).toBe(dialledBefore);
    } finally {
      pinned.close();
    }
  });

  it('refuses IP literals and redirects that leave the allowlist, without dialling them', async () => {
    const pinned = createPinnedFetch({ allow: ['127.0.0.1'], resolve: async () => [] });
    const pinnedFetch = pinned.fetch;
    try {
      const direct = await pinnedFetch(`http://127.0.0.2:${port}/`).catch((failure: unknown) => failure);
      expect(causeOf(direct)).toBeInstanceOf(EgressDeniedError);
      // Redirects are handed back, never followed blindly; following one re-runs the check.
      const redirected = await pinnedFetch(`http://127.0.0.1:${port}/redirect`);
      expect(redirected.status).toBe(302);
      const followed = await pinnedFetch(redirected.headers.get('location') ?? '').catch((failure: unknown) => failure);
      expect(causeOf(followed)).toBeInstanceOf(EgressDeniedError);
      expect(guard.dialled).not.toContain('127.0.0.2');
    } finally {
      pinned.close();
    }
  });

  it('the guard itself refuses a non-loopback dial', async () => {
    const net = await import('node:net');
    const socket = new net.Socket();
    expect(() => socket.connect(9, '192.0.2.1')).toThrow(/loopback guard/);
    socket.destroy();
    guard.violations.length = 0;
  });

  afterAll(() => {
    expect(guard.violations).toEqual([]);
  });
});
