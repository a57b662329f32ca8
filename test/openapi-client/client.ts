// A small typed client: openapi-fetch over the types openapi-typescript generates from openapi.yaml into
// ./generated/ (test/integration/openapi-client.test.ts generates them, type-checks this file, then runs it).
import createClient from 'openapi-fetch';
import type { paths } from './generated/toolgate.js';

export function toolgateClient(baseUrl: string, apiKey: string) {
  return createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${apiKey}` } });
}

export interface SessionSummary {
  live: string | undefined;
  toolNames: string[];
  openaiNames: string[];
  searchHits: number;
  weather: { ok: boolean; output: string; source: string | null };
  batchOutputs: string[];
  unknownTool: string | undefined;
  approvals: number;
  userServers: number;
  missingServerCode: string | undefined;
}

/** One pass over the API with typed calls only: paths, parameters, bodies and answers all come from the document. */
export async function runSession(baseUrl: string, apiKey: string, user: string): Promise<SessionSummary> {
  const client = toolgateClient(baseUrl, apiKey);
  const live = await client.GET('/healthz');
  const native = await client.GET('/v1/tools', { params: { query: { format: 'native' } } });
  const openai = await client.GET('/v1/tools', { params: { query: { format: 'openai' } } });
  const search = await client.GET('/v1/tools/search', { params: { query: { q: 'weather', limit: 3 } } });
  const weather = await client.POST('/v1/execute', { body: { name: 'get_weather', arguments: { city: 'Paris' } } });
  const batch = await client.POST('/v1/execute/batch', {
    body: { calls: [{ name: 'add_numbers', arguments: { numbers: [40, 2] } }, { name: 'echo', arguments: '{"message":"hi"}' }], step: 1 },
  });
  const unknown = await client.POST('/v1/execute', { body: { name: 'no_such_tool' } });
  const approvals = await client.GET('/v1/approvals', { params: { query: { status: 'pending' } } });
  const servers = await client.GET('/v1/users/{userId}/mcp-servers', { params: { path: { userId: user } } });
  const missing = await client.GET('/v1/users/{userId}/mcp-servers/{serviceId}', { params: { path: { userId: user, serviceId: 'absent' } } });

  const listing = native.data;
  const openaiListing = openai.data;
  // 200 answers the ToolResult; 202 (an `async` call) the Task that runs it: the types make a client tell them apart.
  if (!weather.data || !('ok' in weather.data)) throw new Error(`execute failed: ${JSON.stringify(weather.error ?? weather.data)}`);
  return {
    live: live.data?.status,
    toolNames: listing && !Array.isArray(listing) && 'tools' in listing ? listing.tools.map((tool) => String(tool.name)) : [],
    openaiNames: Array.isArray(openaiListing) ? openaiListing.map((entry) => String((entry.function as { name: string }).name)) : [],
    searchHits: search.data?.tools?.length ?? 0,
    weather: { ok: weather.data.ok, output: weather.data.output, source: weather.data.source },
    batchOutputs: (batch.data?.results ?? []).map((result) => result.output),
    unknownTool: unknown.data && 'ok' in unknown.data ? unknown.data.error?.errorType : undefined,
    approvals: approvals.data?.approvals.length ?? -1,
    userServers: servers.data?.servers?.length ?? -1,
    missingServerCode: missing.error?.code,
  };
}
