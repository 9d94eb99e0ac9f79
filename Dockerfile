# syntax=docker/dockerfile:1
# meshgate: one image for `serve` (webhook), `node-agent` (DaemonSet) and `validate-redirect` (injected init container).
# The build stage installs, typechecks, compiles src/ to dist/ (tsconfig.build.json) and drops dev dependencies
# (including the `node` npm package, a second Node binary). The image holds dist/ only, no TypeScript: Node then
# loads no type stripper, and a process starts in half the time and memory (bin/meshgate.js picks dist/).
# test/docker/dockerfile.test.ts replays these steps outside Docker so this file cannot silently rot.
# `npm run release` builds the runtime stage without Docker (scripts/release-image.ts: one layer per COPY, read from
# this file) and adds /app/build-info.json (commit, chart, image reference) for `meshgate version`.

FROM node:24-bookworm AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --prefer-offline --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY src ./src
RUN npx tsc -p . && npx tsc -p tsconfig.build.json && npm prune --omit=dev --no-audit --no-fund

# Distroless: Node 24 and glibc only, no shell or package manager. The :nonroot variant's user is 65532.
FROM gcr.io/distroless/nodejs24-debian12:nonroot
WORKDIR /app
# A 2 MiB young-generation semi-space instead of V8's 16: a webhook under load stays ~20-45 MiB smaller at no
# measured CPU cost per review (docs/benchmarks.md). A NODE_OPTIONS set on the container replaces this one.
ENV NODE_ENV=production NODE_OPTIONS=--max-semi-space-size=2
# Owned by root and read-only to the runtime users (65532 here, the validator's own UID in injected pods).
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/bin ./bin
COPY --from=build /app/dist ./dist
USER 65532:65532
# No `meshgate` on PATH (no shell, no /usr/bin/env for a shebang): containers pass only args, e.g.
# ["serve", "--port=8443"]; a container that must set command uses
# ["/nodejs/bin/node", "--no-maglev", "/app/bin/meshgate.js", ...]. The chart's node agent sets
# ["/nodejs/bin/node", "--lite-mode", "/app/bin/meshgate.js"]: no JIT, ~11 MiB less on every node (docs/benchmarks.md).
# --no-maglev: V8's mid-tier compiler off (Turbofan still optimises the hot path): a webhook under load stays
# ~15 MiB smaller at no CPU cost per review measured once warm (docs/benchmarks.md). Node refuses it in NODE_OPTIONS.
ENTRYPOINT ["/nodejs/bin/node", "--no-maglev", "/app/bin/meshgate.js"]
