# syntax=docker/dockerfile:1
# Build stage: full install (TypeScript, tsx…) to compile src/ and routes/ into dist/.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
# Everything .dockerignore lets through (src/, routes/, policies/ when present, tsconfig.json…).
COPY . .
RUN npm run build

# Runtime stage: production dependencies only, compiled code, example tools; runs as the unprivileged `node` user.
FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080
WORKDIR /app
# grep runs ripgrep; bubblewrap sandboxes bash and grep where the container may create user namespaces
# (otherwise set builtins.sandbox: none, and bash stays off unless builtins.allowUnsandboxedShell is true).
RUN apt-get update \
 && apt-get install -y --no-install-recommends ripgrep bubblewrap \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY examples ./examples
# Built-in file tools write under ./workspaces; it must belong to the user the process runs as.
RUN mkdir -p /app/workspaces && chown node:node /app/workspaces
USER node
EXPOSE 8080
# Slim images have no curl: node itself probes /healthz (liveness; readiness is /readyz).
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "dist/src/server.js"]
