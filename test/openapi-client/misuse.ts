// Calls the generated types must refuse: each `@ts-expect-error` is itself an error when the line
// type-checks, so this file proves the types are strict (not `any`) where a client relies on them.
import { toolgateClient } from './client.js';

export async function misuse(): Promise<void> {
  const client = toolgateClient('http://127.0.0.1:1', 'key');
  // @ts-expect-error: a path the API does not have
  await client.GET('/v1/nothing-here');
  // @ts-expect-error: /v1/execute needs a body with `name`
  await client.POST('/v1/execute', { body: { arguments: {} } });
  // @ts-expect-error: the listing format is one of native | openai | anthropic | mcp
  await client.GET('/v1/tools', { params: { query: { format: 'xml' } } });
  // @ts-expect-error: the one-server route needs its serviceId
  await client.GET('/v1/users/{userId}/mcp-servers/{serviceId}', { params: { path: { userId: 'u' } } });
  const result = await client.POST('/v1/execute', { body: { name: 'echo' } });
  // @ts-expect-error: ToolResult.output is a string
  const wrong: number = result.data!.output;
  void wrong;
}
