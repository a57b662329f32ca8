// input_required to a modern caller behind a round-robin balancer: two replicas on one Redis, the real
// server-everything upstream (legacy: its connection waits for the answer, so the call is held on the replica that
// runs it). The caller's retry with the sealed state and its answer lands on the other replica, which hands the
// answer to the holder over the bus; the call completes, and a replay through either replica is refused.
import { randomBytes } from 'node:crypto';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, signToken } from '../../helpers/build.js';
import { startEverythingReplicas, type EverythingReplicas } from '../../helpers/everything-replicas.js';
import { MODERN_VERSION, modernPost } from '../../helpers/mcp-modern.js';
import { testRedisUrl } from '../../helpers/redis.js';

const REDIS_URL = testRedisUrl();
const prefix = `tg-test-modern-ask:${randomBytes(6).toString('hex')}:`;
const ELICIT = 'trigger-elicitation-request';
let replicas: EverythingReplicas | undefined;
let urls: string[] = [];

beforeAll(async () => {
  if (!REDIS_URL) return;
  replicas = await startEverythingReplicas(REDIS_URL, prefix, 2, { credentials: { keys: [{ id: 'k1', key: Buffer.alloc(32, 9).toString('base64') }] } });
  urls = replicas.urls;
}, 60_000);
afterAll(async () => {
  await replicas?.close();
});

const text = (result: { content?: unknown }): string => (Array.isArray(result.content) ? result.content.map((block: { text?: string }) => block.text ?? '').join('\n') : '');

describe.skipIf(!REDIS_URL)('input_required on two replicas sharing one Redis', () => {
  it('completes the call when every POST of the SDK v2 client goes to the next replica in turn', async () => {
    const routed: Array<{ replica: number; method: string }> = [];
    let turn = 0;
    const transport = new StreamableHTTPClientTransport(new URL(`${urls[0]}/mcp`), {
      requestInit: { headers: bearer(await signToken({ sub: 'alice' })) },
      // A round-robin balancer without stickiness.
      fetch: async (url, init) => {
        const replica = turn++ % 2;
        const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as { method?: string }) : {};
        routed.push({ replica, method: body.method ?? '' });
        return fetch(String(url).replace(urls[0]!, urls[replica]!), init);
      },
    });
    const client = new Client({ name: 'modern-replicas', version: '1.0.0' }, { capabilities: { elicitation: {} }, versionNegotiation: { mode: 'auto' } });
    client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { name: 'Grace Hopper' } }));
    await client.connect(transport);
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe(MODERN_VERSION);
      const result = (await client.callTool({ name: ELICIT, arguments: {} })) as CallToolResult;
      expect(result.isError).toBeFalsy();
      expect(text(result)).toContain('Grace Hopper');
      // The call and its retry went to different replicas.
      const calls = routed.filter((post) => post.method === 'tools/call');
      expect(calls).toHaveLength(2);
      expect(calls[0]!.replica).not.toBe(calls[1]!.replica);
    } finally {
      await client.close();
    }
  });

  it('refuses a replay on either replica, and another user on the other replica', async () => {
    const [alice, bob] = await Promise.all([signToken({ sub: 'alice' }), signToken({ sub: 'bob' })]);
    const capabilities = { elicitation: {} };
    const first = await modernPost(urls[0]!, alice, 'tools/call', { name: ELICIT, arguments: {} }, { capabilities });
    const { requestState, inputRequests } = first.body.result as { requestState: string; inputRequests: Record<string, unknown> };
    const [key] = Object.keys(inputRequests);
    const inputResponses = { [key!]: { action: 'accept', content: { name: 'Ada Lovelace' } } };
    const bobs = await modernPost(urls[1]!, bob, 'tools/call', { name: ELICIT, arguments: {}, requestState, inputResponses }, { capabilities });
    expect(bobs.body.error).toMatchObject({ code: -32602, message: 'Invalid or expired requestState' });
    const done = await modernPost(urls[1]!, alice, 'tools/call', { name: ELICIT, arguments: {}, requestState, inputResponses }, { capabilities });
    expect(text(done.body.result!)).toContain('Ada Lovelace');
    for (const url of urls) {
      const replay = await modernPost(url, alice, 'tools/call', { name: ELICIT, arguments: {}, requestState, inputResponses }, { capabilities });
      expect(replay.body.error).toMatchObject({ code: -32602, message: 'Invalid or expired requestState' });
    }
  });
});
