import { describe, expect, it } from 'vitest';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { createCallHeaderChannel, createUpstreamFetch } from '../../../src/mcp/upstream-fetch.js';

function recordingFetch(seen: Headers[], body = 'ok'): (url: string | URL, init?: RequestInit) => Promise<Response> {
  return async (_url, init) => {
    seen.push(new Headers(init?.headers));
    return new Response(body, { status: 200 });
  };
}

describe('createUpstreamFetch', () => {
  it('adds static headers and per-call headers, dropping authorization and cookies from the call', async () => {
    const seen: Headers[] = [];
    const channel = createCallHeaderChannel();
    const upstream = createUpstreamFetch({ staticHeaders: { 'x-api-key': 'svc' }, base: recordingFetch(seen), channel });
    // A stand-in transport whose send posts the message, as the SDK's HTTP transports do.
    const transport = { send: async (message: unknown) => void (await upstream('http://127.0.0.1/mcp', { method: 'POST', body: JSON.stringify(message) })) } as unknown as Transport;
    channel.attach(transport);
    await channel.run({ 'X-Toolgate-User': 'u1', Authorization: 'Bearer caller', Cookie: 'a=b' }, () => transport.send({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'x' } }));
    await transport.send({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'x' } });
    expect(seen[0]?.get('x-api-key')).toBe('svc');
    expect(seen[0]?.get('x-toolgate-user')).toBe('u1');
    expect(seen[0]?.has('authorization')).toBe(false);
    expect(seen[0]?.has('cookie')).toBe(false);
    expect(seen[1]?.has('x-toolgate-user')).toBe(false);
  });

  it('adds no call headers outside a call', async () => {
    const seen: Headers[] = [];
    await createUpstreamFetch({ base: recordingFetch(seen) })('http://127.0.0.1/mcp', { headers: { accept: 'application/json' } });
    expect([...seen[0]!.keys()]).toEqual(['accept']);
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
