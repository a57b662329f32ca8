// The SDK v2 client walks every page of a listing itself when it is asked without a cursor (what toolgate's
// resource and prompt catalog does): the walk is bounded, so an upstream that pages forever is not read
// without end.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ListResourcesRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { openSession } from '../../../src/mcp/client/upstream-session.js';

describe('a listing the SDK walks itself', () => {
  it('stops at 20 pages of an upstream that pages forever, with the SDK’s typed error', async () => {
    let pages = 0;
    const session = await openSession(
      {
        transport: 'in-memory',
        server: () => {
          const server = new Server({ name: 'pager', version: '1.0.0' }, { capabilities: { resources: {} } });
          // "Forever" ends at 100 pages, so that an unbounded walk finishes (and fails the test) instead of hanging.
          server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: [{ uri: `file:///${pages}`, name: String(pages++) }], ...(pages < 100 ? { nextCursor: 'more' } : {}) }));
          return server;
        },
      },
      { label: 'pager', log: pino({ level: 'silent' }), timeoutMs: 5_000 },
    );
    try {
      const failure = await session.client.listResources().then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure instanceof SdkError && failure.code).toBe(SdkErrorCode.ListPaginationExceeded);
      expect(pages).toBe(20);
    } finally {
      await session.close();
    }
  });
});
