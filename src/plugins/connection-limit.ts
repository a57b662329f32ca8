import fp from 'fastify-plugin';

/**
 * At most `max` open connections per client address (`server.maxConnectionsPerAddress`, 0 = no bound):
 * one client opening socket after socket cannot use up the process's file descriptors and memory for every
 * other client. The excess is destroyed as it arrives. Behind a proxy every connection comes from the
 * proxy's address, so set the bound for that (or 0) there.
 */
export const connectionLimitPlugin = fp(
  async (app) => {
    // Read once: the listener keeps the bound it started with (a restart-only setting).
    const max = app.gateway.config.server.maxConnectionsPerAddress;
    if (max <= 0) return;
    const open = new Map<string, number>();
    app.server.on('connection', (socket) => {
      const address = socket.remoteAddress ?? '';
      const current = open.get(address) ?? 0;
      if (current >= max) {
        socket.destroy();
        return;
      }
      open.set(address, current + 1);
      socket.once('close', () => {
        const left = (open.get(address) ?? 1) - 1;
        if (left <= 0) open.delete(address);
        else open.set(address, left);
      });
    });
  },
  { name: 'toolgate-connection-limit', dependencies: ['toolgate-gateway'] },
);
