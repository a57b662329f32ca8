// What the session layer reads from a POSTed JSON-RPC body (one message or a batch) before the SDK does.
import { CallToolRequestSchema, CancelledNotificationSchema, isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';

const messagesOf = (body: unknown): unknown[] => (Array.isArray(body) ? body : [body]);

/** The body opens a session: an `initialize` request (alone, as the transport requires). */
export function opensSession(body: unknown): boolean {
  return messagesOf(body).some((message) => isInitializeRequest(message));
}

/** The request ids that `notifications/cancelled` messages of the body name. */
export function cancelledRequestIds(body: unknown): Array<string | number> {
  const ids: Array<string | number> = [];
  for (const message of messagesOf(body)) {
    const parsed = CancelledNotificationSchema.safeParse(message);
    if (parsed.success && parsed.data.params.requestId !== undefined) ids.push(parsed.data.params.requestId);
  }
  return ids;
}

/** A `tools/call` of the body carries a `progressToken`: its progress needs an event-stream answer, not one JSON body. */
export function asksForProgress(body: unknown): boolean {
  return messagesOf(body).some((message) => {
    const parsed = CallToolRequestSchema.safeParse(message);
    return parsed.success && parsed.data.params._meta?.progressToken !== undefined;
  });
}

/** The body holds a `tools/call`. */
export function callsTool(body: unknown): boolean {
  return messagesOf(body).some((message) => CallToolRequestSchema.safeParse(message).success);
}
