import fp from 'fastify-plugin';
import { createTaskService, type TaskService } from '../tasks/service.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Tasks (MCP `tools/call` with `task`, `/v1/execute` with `async`), in the store. */
    tasks: TaskService;
  }
}

/** The task service; closed before the audit sink and the store it writes to. */
export const tasksPlugin = fp(
  async (app) => {
    const tasks = createTaskService({ store: app.store, bus: app.bus, approvals: app.approvals, audit: app.audit, log: app.log });
    app.decorate('tasks', tasks);
    app.addHook('onClose', async () => tasks.close());
  },
  { name: 'toolgate-tasks', dependencies: ['toolgate-store', 'toolgate-audit', 'toolgate-approvals'] },
);
