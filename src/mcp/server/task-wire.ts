// What the task methods of both MCP eras read and answer on the wire (docs/mcp.md#tasks): their params, in
// the schema contract SDK v2 takes for a method it has no typed surface for, and their errors.
import { ProtocolError, ProtocolErrorCode, type StandardSchemaV1 } from '@modelcontextprotocol/server';
import { TaskError } from '../../tasks/types.js';

/** `{taskId: string}`, the params of tasks/get, tasks/result and tasks/cancel. */
export const taskIdParams: StandardSchemaV1<unknown, { taskId: string }> = {
  '~standard': {
    version: 1,
    vendor: 'toolgate',
    validate: (value) =>
      typeof value === 'object' && value !== null && 'taskId' in value && typeof value.taskId === 'string'
        ? { value: { taskId: value.taskId } }
        : { issues: [{ message: 'taskId must be a string' }] },
  },
};

/** The params of tasks/list: its cursor is ignored (one page, bounded by mcpServer.tasks.maxPerUser). */
export const anyParams: StandardSchemaV1<unknown, unknown> = {
  '~standard': { version: 1, vendor: 'toolgate', validate: (value) => ({ value }) },
};

/** Task errors on the JSON-RPC wire: another user's id reads exactly like an unknown one. */
export function taskWireError(error: unknown): unknown {
  if (error instanceof TaskError && error.code === 'NOT_FOUND') return new ProtocolError(ProtocolErrorCode.InvalidParams, 'Failed to retrieve task: Task not found');
  if (error instanceof TaskError) return new ProtocolError(ProtocolErrorCode.InvalidRequest, error.message);
  return error;
}
