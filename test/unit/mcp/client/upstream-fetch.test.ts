import { describe, expect, it } from 'vitest';
import { callHeadersMeta, createUpstreamFetch } from '../../../../src/mcp/client/upstream-fetch.js';

interface Seen {
  headers: Headers;
  body: unknown;
}

function recordingFetch(seen: Seen[], answer = 'ok'): (url: string | URL, init?: RequestInit) => Promise<Response> {
  return async (_url, init) => {
    seen.push({ headers: new Headers(init?.headers), body: typeof init?.body === 'string' ? JSON.parse(init.body) : init?.body });
    return new Response(answer, { status: 200 });
  };
}

const post = (message: unknown): RequestInit => ({ method: 'POST', body: JSON.stringify(message) });

describe('createUpstreamFetch', () => {
  it('sends a call\'s headers from its message _meta, takes them out of the body, and drops authorization and cookies', async () => {
    const seen: Seen[] = [];
    const upstream = createUpstreamFetch({ staticHeaders: { 'x-api-key': 'svc' }, base: recordingFetch(seen) });
    const meta = { ...callHeadersMeta({ 'X-Toolgate-User': 'u1', 'x-toolgate-depth': '3', Authorization: 'Bearer caller', Cookie: 'a=b' }), progressToken: 5 };
    await upstream('http://127.0.0.1/mcp', post({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'x', arguments: { a: 1 }, _meta: meta } }));
    await upstream('http://127.0.0.1/mcp', post({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'x', arguments: {} } }));
    const [call, plain] = seen;
    expect(call?.headers.get('x-api-key')).toBe('svc');
    expect(call?.headers.get('x-toolgate-user')).toBe('u1');
    expect(call?.headers.get('x-toolgate-depth')).toBe('3');
    expect(call?.headers.has('authorization')).toBe(false);
    expect(call?.headers.has('cookie')).toBe(false);
    // The upstream sees the message without toolgate's key; other _meta stays.
    expect(call?.body).toEqual({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'x', arguments: { a: 1 }, _meta: { progressToken: 5 } } });
    expect(plain?.headers.has('x-toolgate-user')).toBe(false);
    expect(plain?.body).toEqual({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'x', arguments: {} } });
  });

  it('sends depth 1 and no call headers outside a call, even when arguments mention the key', async () => {
    const seen: Seen[] = [];
    const upstream = createUpstreamFetch({ base: recordingFetch(seen) });
    await upstream('http://127.0.0.1/mcp', { headers: { accept: 'application/json' } });
    const sneaky = { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'x', arguments: callHeadersMeta({ 'x-toolgate-user': 'forged' }) } };
    await upstream('http://127.0.0.1/mcp', post(sneaky));
    expect([...seen[0]!.headers.entries()]).toEqual([
      ['accept', 'application/json'],
      ['x-toolgate-depth', '1'],
    ]);
    expect(seen[1]?.headers.has('x-toolgate-user')).toBe(false);
    expect(seen[1]?.body).toEqual(sneaky);
  });

  it('still aborts an open streaming body when the transport signal aborts', async () => {
    const transport = new AbortController();
    const base = async (_url: string | URL, init?: RequestInit): Promise<Response> => {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          init?.signal?.addEventListener('abort', () => controller.error(new Error('aborted')), { once: true });
        },
      });
      return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
    };
    const response = await createUpstreamFetch({ base })('http://127.0.0.1/mcp', { signal: transport.signal });
    const reading = response.text();
    transport.abort();
    await expect(reading).rejects.toThrow('aborted');
  });
});
