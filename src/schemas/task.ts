/** A task as the REST API shows it (docs/api.md#tasks); the same record MCP's tasks/get reads. */
export const taskSchema = {
  $id: 'Task',
  type: 'object',
  required: ['taskId', 'status', 'tool', 'callId', 'createdAt', 'lastUpdatedAt', 'ttl', 'pollInterval'],
  properties: {
    taskId: { type: 'string' },
    status: { type: 'string', enum: ['working', 'input_required', 'completed', 'failed', 'cancelled'] },
    statusMessage: { type: 'string' },
    tool: { type: 'string' },
    callId: { type: 'string' },
    approvalId: { type: 'string', description: 'The approval request the call made, while (or since) it waited for a human' },
    createdAt: { type: 'string', format: 'date-time' },
    lastUpdatedAt: { type: 'string', format: 'date-time' },
    ttl: { type: 'integer', description: 'Kept this many ms after its last change' },
    pollInterval: { type: 'integer', description: 'Suggested ms between polls' },
    result: { $ref: 'ToolResult#', description: 'Once completed or failed: the call’s ToolResult' },
  },
} as const;
