// Upstream identity across replicas on one Redis (docs/security-model.md#upstream-identity): a connection
// made through one replica is used by another at once, two replicas refreshing one expired token spend its
// refresh token once (a lease in the store), the keyspace holds no token in plaintext, and an MCP session on
// one replica hears that its URL elicitation completed through another.
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitationCompleteNotificationSchema, UrlElicitationRequiredError } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, buildTestApp, signToken } from '../../helpers/build.js';
import { boundedRedisClient, deleteRedisKeys, testRedisUrl } from '../../helpers/redis.js';
import { authorize, call, connect, seen, startStage, type Stage } from './setup.js';

const REDIS_URL = testRedisUrl();
const prefix = `tg-test-identity:${randomBytes(6).toString('hex')}:`;

let stage: Stage;
let replicaA: FastifyInstance;
let replicaB: FastifyInstance;

beforeAll(async () => {
  if (!REDIS_URL) return;
  stage = await startStage();
  const config = stage.config({ store: { kind: 'redis', url: REDIS_URL, prefix } });
  [replicaA, replicaB] = await Promise.all([buildTestApp(config), buildTestApp(config)]);
});

afterAll(async () => {
  await Promise.all([replicaA?.close(), replicaB?.close()]);
  await stage?.close();
  if (REDIS_URL) await deleteRedisKeys(REDIS_URL, prefix);
});

describe.skipIf(!REDIS_URL)('upstream identity on two replicas sharing Redis', () => {
  it('a connection made on one replica is used by the other at once', async () => {
    const alice = await signToken({ sub: 'alice' });
    expect((await connect(replicaA, alice, 'jira', 'alice')).statusCode).toBe(200);
    expect(seen(await call(replicaB, alice, 'jira_whoami')).sub).toBe('alice');
  });

  it('two replicas refreshing one expired token at once spend its refresh token once', async () => {
    stage.as.expiresIn = 5; // below the early-renewal margin: the next use refreshes
    const bob = await signToken({ sub: 'bob' });
    try {
      expect((await connect(replicaA, bob, 'jira', 'bob')).statusCode).toBe(200);
      stage.as.expiresIn = 3600;
      const refreshes = stage.as.grants.filter((grant) => grant === 'refresh_token').length;
      // The server rotates refresh tokens: a second refresh with the same one would be refused (invalid_grant).
      const [a, b] = await Promise.all([call(replicaA, bob, 'jira_whoami'), call(replicaB, bob, 'jira_whoami')]);
      expect(seen(a).sub).toBe('bob');
      expect(seen(b).sub).toBe('bob');
      expect(stage.as.grants.filter((grant) => grant === 'refresh_token').length).toBe(refreshes + 1);
    } finally {
      stage.as.expiresIn = 3600;
    }
  });

  it('SCAN of the keyspace after the flows finds no plaintext access or refresh token', async () => {
    const redis = boundedRedisClient(REDIS_URL as string);
    try {
      const values: string[] = [];
      let cursor = '0';
      for (let round = 0; round < 1000; round += 1) {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', '500');
        for (const key of keys) {
          const type = await redis.type(key);
          if (type === 'string') values.push(key, (await redis.get(key)) ?? '');
          else if (type === 'list') values.push(key, ...(await redis.lrange(key, 0, -1)));
          else if (type === 'zset') values.push(key, ...(await redis.zrange(key, '0', '-1')));
          else if (type === 'hash') values.push(key, ...Object.values(await redis.hgetall(key)));
        }
        cursor = next;
        if (cursor === '0') break;
      }
      expect(values.some((value) => value.includes('uauth:conn:'))).toBe(true);
      const everything = values.join('\n');
      expect(stage.as.issued.length).toBeGreaterThan(4);
      for (const token of stage.as.issued) expect(everything.includes(token)).toBe(false);
    } finally {
      redis.disconnect();
    }
  });

  it('a URL elicitation sent by one replica completes through the callback on the other: the session hears it and the retry runs', async () => {
    const baseUrl = await replicaB.listen({ host: '127.0.0.1', port: 0 });
    const client = new Client({ name: 'test-agent', version: '1.0.0' }, { capabilities: { elicitation: { url: {} } } });
    const heard = new Promise<string>((resolve) => client.setNotificationHandler(ElicitationCompleteNotificationSchema, (note) => resolve(note.params.elicitationId)));
    await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers: bearer(await signToken({ sub: 'pia' })) } }));
    try {
      const error = await client.callTool({ name: 'jira_whoami', arguments: {} }).then(() => undefined, (failure: unknown) => failure);
      expect(error).toBeInstanceOf(UrlElicitationRequiredError);
      const [elicitation] = (error as UrlElicitationRequiredError).elicitations;
      // The browser lands on replica A.
      expect((await replicaA.inject({ url: await authorize(elicitation!.url, 'pia') })).statusCode).toBe(200);
      const timeout = new Promise<string>((resolve) => setTimeout(() => resolve('timed out'), 5000).unref());
      expect(await Promise.race([heard, timeout])).toBe(elicitation!.elicitationId);
      const done = await client.callTool({ name: 'jira_whoami', arguments: {} });
      expect(JSON.stringify(done.content)).toContain('\\"sub\\":\\"pia\\"');
    } finally {
      await client.close();
    }
  });
});
