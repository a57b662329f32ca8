// The only file that listens. Loads config (or the embedded demo), serves, reloads on SIGHUP and
// shuts down gracefully: readiness 503, stop accepting, let in-flight calls finish within the grace, then
// cancel and answer the rest, close upstreams, flush the audit log (src/http/shutdown.ts).
// First: hold one tick object before the rest of the graph loads and collects (src/runtime/keep-tick-shape.ts).
import './runtime/keep-tick-shape.js';
import closeWithGrace from 'close-with-grace';
import type { FastifyInstance } from 'fastify';
import { buildServer } from './app.js';
import { configPathFrom, EXIT_CONFIG, EXIT_USAGE, startAnswer, UsageError } from './cli.js';
import { demoBanner, demoConfig, type DemoConfig } from './config/demo.js';
import { startBanner } from './config/start-banner.js';
import { firstLine } from './config/error-location.js';
import { listenAddresses, type ListenAddress } from './config/listen-env.js';
import { ConfigError, loadConfigFile } from './config/load.js';
import type { GatewayConfig } from './config/types.js';
import { watchConfigFile } from './config/watch.js';
import { ANSWER_MARGIN_MS, shutDownGracefully } from './http/shutdown.js';
import { stdoutDestination } from './observability/stdout.js';
import { logReload } from './snapshot/reload.js';

async function initialConfig(path: string | undefined): Promise<{ config: GatewayConfig; demo?: DemoConfig }> {
  if (path) return { config: await loadConfigFile(path) };
  const demo = demoConfig();
  return { config: demo.config, demo };
}

const portOf = (address: string): number => Number(new URL(address).port);

/** Exit code when a listener cannot bind (EX_UNAVAILABLE): a port in use is not a configuration error. */
const EXIT_CANNOT_LISTEN = 69;
const LISTEN_ERRORS: Record<string, string> = { EADDRINUSE: 'address already in use', EACCES: 'permission denied', EADDRNOTAVAIL: 'address not available on this host' };

interface Listener extends ListenAddress {
  server: FastifyInstance;
}

/**
 * A configuration error, from the file or found while building on it (a policy option, a module that does
 * not load): one line on stderr, exit 78, no stack. Anything else is a bug and keeps its stack.
 */
function exitIfConfigError(error: unknown): void {
  const isConfig = error instanceof ConfigError || (error instanceof Error && (error as { code?: unknown }).code === 'TG_CONFIG_INVALID');
  if (!isConfig) return;
  process.stderr.write(`toolgate: ${firstLine(error.message)}\n`);
  process.exit(EXIT_CONFIG);
}

/**
 * Binds each listener in order and returns their addresses. A port that cannot be bound closes the app
 * (upstreams, the listeners already bound) and exits with one line on stderr and no stack.
 */
async function listenOrExplain(app: FastifyInstance, listeners: Listener[]): Promise<string[]> {
  const addresses: string[] = [];
  for (const { server, host, port, key, hint } of listeners) {
    try {
      addresses.push(await server.listen({ host, port }));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === undefined || !Object.hasOwn(LISTEN_ERRORS, code)) throw error;
      await app.close().catch(() => undefined);
      process.stderr.write(`toolgate: cannot listen on ${host}:${port} (${key}): ${LISTEN_ERRORS[code]} (${code}): ${hint}\n`);
      process.exit(EXIT_CANNOT_LISTEN);
    }
  }
  return addresses;
}

async function main(): Promise<void> {
  const answer = startAnswer(process.argv.slice(2));
  if (answer !== undefined) {
    process.stdout.write(answer);
    return;
  }
  let configPath: string | undefined;
  try {
    configPath = configPathFrom(process.argv.slice(2), process.env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`toolgate: ${error.message}\n`);
    process.exit(EXIT_USAGE);
  }
  let loaded;
  try {
    loaded = await initialConfig(configPath);
  } catch (error) {
    exitIfConfigError(error);
    throw error;
  }
  const { config, demo } = loaded;
  let addresses;
  try {
    addresses = listenAddresses(config, process.env);
  } catch (error) {
    exitIfConfigError(error);
    throw error;
  }
  // Building can still find the configuration wrong (a bad OTEL_* variable, an OpenAPI document that does not
  // import): the same one-line message and exit code as a bad config file, not a stack trace.
  const app = await buildServer(config, {
    loadConfig: configPath ? () => loadConfigFile(configPath) : undefined,
  }).catch((error: unknown) => {
    exitIfConfigError(error);
    throw error;
  });
  // Explicit server timeouts: a slow client cannot hold a socket forever. The body deadline itself is
  // `server.bodyTimeoutMs` (answered 408 by the app); Node's request timeout is only the backstop behind it.
  app.server.headersTimeout = 15_000;
  app.server.requestTimeout = app.server.headersTimeout + config.server.bodyTimeoutMs + 5_000;
  app.server.keepAliveTimeout = 72_000;
  // Calls still in flight at shutdown answer with `Connection: close`: close() only ends the sockets
  // idle at that moment, so a keep-alive socket turning idle later would hold the process open until
  // the hard stop kills it (exit 1).
  // Callback style: an async hook would cost every response a promise for a flag that is almost never set.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (app.drain.refusing) reply.header('connection', 'close');
    done(null, payload);
  });

  // Metrics cover every tenant: their own listener, loopback by default (docs/operations.md#metrics). It binds
  // first and silently, so a port in use on either listener stops the process before any "listening" line.
  const listened = await listenOrExplain(app, [
    ...(app.metricsServer && addresses.metrics ? [{ server: app.metricsServer, ...addresses.metrics }] : []),
    { server: app, ...addresses.api },
  ]);
  if (app.metricsServer) app.log.info({ address: listened[0] }, 'metrics listener');
  const apiAddress = listened[listened.length - 1]!;
  // The demo's keys and where to use them on stdout for a person; a config start says where it serves in one log line.
  if (demo) {
    // Request lines scroll the keys away: SIGUSR2 prints them again (the banner's last line says how).
    const banner = `${demoBanner(demo, portOf(apiAddress))}\nthese keys again: kill -USR2 ${process.pid}\n`;
    process.stdout.write(banner);
    process.on('SIGUSR2', () => process.stdout.write(banner));
  }
  else {
    const { msg, ...where } = startBanner(config, apiAddress, app.metricsServer ? listened[0] : undefined);
    app.log.info(where, msg);
  }

  const reload = (trigger: string) => () => {
    app.reloadConfig().then(
      (outcome) => logReload(app.log, outcome, trigger),
      (error: unknown) => app.log.error({ err: error, trigger }, 'configuration reload refused; the previous configuration keeps serving'),
    );
  };
  process.on('SIGHUP', reload('SIGHUP'));
  const stopWatching = configPath && config.reload.watch ? watchConfigFile(configPath, reload('file-watch')) : undefined;

  // SIGHUP means reload here, not shutdown (close-with-grace would otherwise close on it). Its delay is the
  // hard stop: the grace, then time to answer, audit and flush the calls cancelled at its end.
  const { shutdownGraceMs: graceMs, drainDelayMs } = config.server;
  // The demo's SIGUSR2 prints its keys again: it must not stop it either.
  closeWithGrace({ delay: graceMs + ANSWER_MARGIN_MS, skip: demo ? ['SIGHUP', 'SIGUSR2'] : ['SIGHUP'] }, async ({ signal, err }) => {
    if (err) app.log.error({ err }, 'shutting down after an error');
    else app.log.info({ signal }, 'shutting down');
    stopWatching?.();
    await shutDownGracefully(app, { graceMs, drainDelayMs });
    // close-with-grace exits with process.exit next: the log lines still waiting go out here, within the
    // grace delay (the exit flush would write them too, but a full pipe gets only a second there).
    await stdoutDestination().flush();
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`toolgate: failed to start: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
