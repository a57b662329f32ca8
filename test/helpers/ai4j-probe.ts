// ai4j's protocol probe, as its Java source does it (LnYo-Cly/ai4j, commit 6955545,
// ai4j/src/main/java/io/github/lnyocly/ai4j/mcp/transport/StreamableHttpTransport.java: probeProtocol,
// readProbeResponse, classifySuccessfulProbe, supportsModernVersion, isLegacyDiscoveryError), so a test
// speaks its exact request and judges the answer its way.

export type Ai4jProfile = 'MODERN_2026_07_28' | 'LEGACY_2025_11_25';

interface McpMessage {
  id?: unknown;
  method?: unknown;
  result?: unknown;
  error?: { code?: unknown } | null;
}

/** McpMessage.isResponse / isSuccessResponse / isErrorResponse. */
const isResponse = (message: McpMessage): boolean => message.method == null && message.id != null && (message.result != null || message.error != null);
const isSuccessResponse = (message: McpMessage): boolean => isResponse(message) && message.error == null;
const isErrorResponse = (message: McpMessage): boolean => isResponse(message) && message.error != null;

const parse = (body: string): McpMessage => JSON.parse(body) as McpMessage;

/** Only a JSON-RPC -32601 (method not found) is evidence of a legacy endpoint. */
function isLegacyDiscoveryError(body: string): boolean {
  if (body.trim() === '') return false;
  try {
    const message = parse(body);
    if (!isErrorResponse(message) || message.error?.code == null) return false;
    return message.error.code === -32601;
  } catch {
    return false;
  }
}

/** The success must name 2026-07-28 among `supportedVersions`. */
function supportsModernVersion(result: unknown): boolean {
  if (typeof result !== 'object' || result === null || !('supportedVersions' in result) || !Array.isArray(result.supportedVersions)) return false;
  return result.supportedVersions.some((version) => String(version) === '2026-07-28');
}

function classifySuccessfulProbe(body: string): Ai4jProfile {
  let message: McpMessage;
  try {
    message = parse(body);
  } catch {
    throw new Error('MCP server did not return a usable modern discovery result');
  }
  if (isSuccessResponse(message) && supportsModernVersion(message.result)) return 'MODERN_2026_07_28';
  if (isErrorResponse(message) && isLegacyDiscoveryError(body)) return 'LEGACY_2025_11_25';
  if (isErrorResponse(message)) throw new Error('MCP server returned a JSON-RPC error during protocol discovery');
  throw new Error('MCP server did not return a usable modern discovery result');
}

/** readFirstSseData: the first event's data lines joined, for an event-stream answer. */
function firstSseData(text: string): string {
  const data: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    if (line === '') {
      if (data.length > 0) return data.join('\n');
      continue;
    }
    if (line.startsWith('data:')) data.push(line.slice('data:'.length).replace(/^ /, ''));
  }
  return data.join('\n');
}

/**
 * probeProtocol: one POST of server/discover with the modern envelope and headers (plus what OkHttp adds
 * by itself); modern on a success naming 2026-07-28, legacy only on JSON-RPC -32601, an error otherwise.
 */
export async function ai4jProbe(url: string, headers: Record<string, string>, client = { name: 'ai4j', version: 'unknown' }): Promise<Ai4jProfile> {
  const params = {
    _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: client.name, version: client.version },
      'io.modelcontextprotocol/clientCapabilities': {},
    },
  };
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      ...headers,
      // RequestBody.create(MediaType.get("application/json"), String): OkHttp sends the body's type with its charset.
      'Content-Type': 'application/json; charset=utf-8',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': 'server/discover',
      'User-Agent': 'okhttp/3.14.9',
    },
    body: JSON.stringify({ id: 0, jsonrpc: '2.0', method: 'server/discover', params }),
  });
  const text = await response.text();
  const body = (response.headers.get('content-type') ?? '').startsWith('text/event-stream') ? firstSseData(text) : text;
  if (response.ok) return classifySuccessfulProbe(body);
  if (isLegacyDiscoveryError(body)) return 'LEGACY_2025_11_25';
  throw new Error(`HTTP ${response.status}: ${body}`);
}
