// What the session layer reads from a POSTed JSON-RPC body (one message or a batch) before the SDK does.
import { isInitializeRequest, isSpecType } from '@modelcontextprotocol/server';

const messagesOf = (body: unknown): unknown[] => (Array.isArray(body) ? body : [body]);

/** The body opens a session: an `initialize` request (alone, as the transport requires). */
export function opensSession(body: unknown): boolean {
  return messagesOf(body).some((message) => isInitializeRequest(message));
}

/** The request ids that `notifications/cancelled` messages of the body name. */
export function cancelledRequestIds(body: unknown): Array<string | number> {
  const ids: Array<string | number> = [];
  for (const message of messagesOf(body)) {
    if (isSpecType.CancelledNotification(message) && message.params.requestId !== undefined) ids.push(message.params.requestId);
  }
  return ids;
}

/** A `tools/call` of the body carries a `progressToken`: its progress needs an event-stream answer, not one JSON body. */
export function asksForProgress(body: unknown): boolean {
  return messagesOf(body).some((message) => {
    return isSpecType.CallToolRequest(message) && message.params._meta?.progressToken !== undefined;
  });
}

/** The body holds a `tools/call`. */
export function callsTool(body: unknown): boolean {
  return messagesOf(body).some((message) => isSpecType.CallToolRequest(message));
}
