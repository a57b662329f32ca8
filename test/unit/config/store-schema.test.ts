// `store` with `kind: redis`: exactly one of `url`, `cluster` and `sentinel`, an optional `tls` whose
// files resolve against the config file, and a prefix without braces (docs/configuration.md#store).
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, validateConfigObject } from '../../../src/config/load.js';

const BASE = '/etc/toolgate';
const load = (store: Record<string, unknown>) => validateConfigObject({ store }, BASE, 'test.yaml').store;
const refused = (store: Record<string, unknown>): string => {
  try {
    load(store);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('accepted');
};

const defaults = { prefix: 'toolgate:', onUnavailable: 'fail-closed', commandTimeoutMs: 1000 };

describe('the store schema', () => {
  it('takes one server by URL, with TLS files resolved against the config folder', () => {
    expect(load({ kind: 'redis', url: 'rediss://cache.internal:6380', tls: { ca: 'ca.pem', servername: 'cache.example' } })).toEqual({
      kind: 'redis', url: 'rediss://cache.internal:6380', tls: { ca: join(BASE, 'ca.pem'), servername: 'cache.example' }, ...defaults,
    });
  });

  it('takes a Cluster by its seed nodes', () => {
    expect(load({ kind: 'redis', cluster: { nodes: ['redis://10.0.0.1:7000', 'rediss://10.0.0.2:7000'] }, tls: { ca: '/pki/ca.pem', cert: 'c.pem', key: 'k.pem' } })).toEqual({
      kind: 'redis', cluster: { nodes: ['redis://10.0.0.1:7000', 'rediss://10.0.0.2:7000'] }, tls: { ca: '/pki/ca.pem', cert: join(BASE, 'c.pem'), key: join(BASE, 'k.pem') }, ...defaults,
    });
  });

  it('takes a Sentinel-watched master by name and the Sentinels as host:port', () => {
    expect(load({ kind: 'redis', sentinel: { name: 'mymaster', sentinels: ['s1:26379', '10.0.0.3:26379'], password: 'pw' }, prefix: 'tg:' })).toEqual({
      kind: 'redis', sentinel: { name: 'mymaster', sentinels: ['s1:26379', '10.0.0.3:26379'], password: 'pw' }, ...defaults, prefix: 'tg:',
    });
  });

  it('refuses two topologies at once, or none', () => {
    refused({ kind: 'redis', url: 'redis://a:6379', cluster: { nodes: ['redis://b:7000'] } });
    refused({ kind: 'redis', cluster: { nodes: ['redis://b:7000'] }, sentinel: { name: 'm', sentinels: ['s:1'] } });
    refused({ kind: 'redis' });
  });

  it('refuses malformed topologies and keys that belong to another kind', () => {
    refused({ kind: 'redis', cluster: { nodes: [] } });
    refused({ kind: 'redis', cluster: { nodes: ['http://b:7000'] } });
    refused({ kind: 'redis', sentinel: { sentinels: ['s:26379'] } });
    refused({ kind: 'redis', sentinel: { name: 'm', sentinels: ['no-port'] } });
    refused({ kind: 'redis', url: 'redis://a:6379', tls: { verify: false } });
    refused({ kind: 'memory', cluster: { nodes: ['redis://b:7000'] } });
  });

  it('refuses a prefix with a brace, which would move every key into one hash slot', () => {
    refused({ kind: 'redis', url: 'redis://a:6379', prefix: '{toolgate}:' });
    refused({ kind: 'redis', cluster: { nodes: ['redis://b:7000'] }, prefix: 'tg{' });
  });
});
