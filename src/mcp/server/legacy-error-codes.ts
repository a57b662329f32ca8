// The legacy era's error code for a resource that does not exist (docs/mcp.md#resources-and-prompts): MCP
// 2025-11-25 answers `resources/read` of an unknown URI with -32002, which toolgate always sent. SDK v2
// encodes -32002 as -32602 in both eras (the 2026-07-28 code), with no option to keep it; this transport
// wrapper puts -32002 back on the legacy wire, for `resources/read` answers only. Every -32602 of a read is
// a not-found there: malformed read params are refused before the SDK sees them (request-params.ts).
import { isJSONRPCErrorResponse, isJSONRPCRequest, isJSONRPCResultResponse, type JSONRPCMessage, type MessageExtraInfo, type RequestId, type Transport, type TransportSendOptions } from '@modelcontextprotocol/server';

const RESOURCE_NOT_FOUND = -32002;
const INVALID_PARAMS = -32602;

export class LegacyResourceErrors implements Transport {
  /** The ids of the resources/read requests not answered yet (one POST's worth). */
  private readonly reads = new Set<RequestId>();
  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;

  constructor(private readonly inner: Transport) {}

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  start(): Promise<void> {
    this.inner.onmessage = (message: JSONRPCMessage, extra?: MessageExtraInfo) => {
      if (isJSONRPCRequest(message) && message.method === 'resources/read') this.reads.add(message.id);
      this.onmessage?.(message, extra);
    };
    this.inner.onclose = () => this.onclose?.();
    this.inner.onerror = (error) => this.onerror?.(error);
    return this.inner.start();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (isJSONRPCErrorResponse(message) && message.id !== undefined && this.reads.delete(message.id) && message.error.code === INVALID_PARAMS) {
      return this.inner.send({ ...message, error: { ...message.error, code: RESOURCE_NOT_FOUND } }, options);
    }
    if (isJSONRPCResultResponse(message)) this.reads.delete(message.id);
    return this.inner.send(message, options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }

  setSupportedProtocolVersions(versions: string[]): void {
    this.inner.setSupportedProtocolVersions?.(versions);
  }
}
