# syntax=docker/dockerfile:1
# Build stage: full install (TypeScript, tsx…) to compile src/, routes/ and policies/ into dist/.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
# Everything .dockerignore lets through (src/, routes/, policies/, tsconfig.json…).
COPY . .
RUN npm run build

# Runtime stage: Node 24 LTS, production dependencies only, compiled code and the demo's own files.
# Runs as the unprivileged `node` user (uid 1000) under tini, and works with a read-only root
# filesystem: the only paths it writes are the declared volumes (/app/workspaces, and /tmp for the
# built-in shell's commands; mount a tmpfs there).
FROM node:24-bookworm-slim AS runtime
# tini: PID 1 that forwards signals and reaps the built-in shell's orphaned children.
# grep runs ripgrep; bubblewrap sandboxes bash and grep where the container may create user namespaces
# (otherwise set builtins.sandbox: none, and bash stays off unless builtins.allowUnsandboxedShell is true;
# see docs/operations.md#image).
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends tini ripgrep bubblewrap \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# The embedded demo's and the compose config's files only, not the whole examples/ folder.
COPY examples/functions/demo-tools.mjs ./examples/functions/demo-tools.mjs
COPY examples/kb.jsonl ./examples/kb.jsonl
COPY examples/mcp/calc.mjs ./examples/mcp/calc.mjs
COPY examples/configs/compose.yaml ./examples/configs/compose.yaml
# Built-in file tools write under ./workspaces; it must belong to the user the process runs as.
RUN mkdir -p /app/workspaces && chown node:node /app/workspaces
VOLUME ["/app/workspaces", "/tmp"]
USER node
EXPOSE 8080 9464
# Slim images have no curl: node itself probes /healthz (liveness; readiness is /readyz).
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/src/server.js"]
