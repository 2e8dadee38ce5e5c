# syntax=docker/dockerfile:1
# Node 26 "Lithium" is the Active LTS line since 2026-10-28 (security fixes until 2029-04-30);
# 24 went to maintenance on 2026-10-20. test/ops/docker.test.ts fails once this line is past
# its end of life. Both stages use the same image, so argon2's prebuilt N-API binary matches.
ARG NODE_IMAGE=node:26-trixie-slim

# Build stage: compile TypeScript with dev dependencies. Scripts are skipped here: `prepare`
# would compile before the sources are copied, and no dependency needs its install script to
# compile (argon2 loads its prebuilt binary at run time).
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts ./scripts
COPY src ./src
COPY migrations ./migrations
RUN npm run build

# Runtime stage: production dependencies only, no TypeScript, non-root, production mode.
FROM ${NODE_IMAGE} AS runtime
# The release (package.json's version, CHANGELOG.md's newest entry; test/ops/docker.test.ts keeps them equal).
LABEL org.opencontainers.image.title="Latchkey" \
      org.opencontainers.image.version="0.3.0"
# V8's old space capped at 512 MB, as `npm start` does (docs/decisions.md, "Memory stays flat");
# the live heap is 35-75 MB. Set NODE_OPTIONS to change it.
ENV NODE_ENV=production \
    NODE_OPTIONS=--max-old-space-size=512 \
    PORT=3000 \
    DATA_DIR=/app/data
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` needs TypeScript (a dev dependency); argon2 ships prebuilt
# binaries (prebuilds/linux-{x64,arm64}) that node-gyp-build loads at run time.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# Everything dist/ reads at run time beside itself: pages and mails, static files, the languages'
# catalogs. test/ops/docker-image.test.ts starts the image's CMD from exactly this file set.
COPY views ./views
COPY public ./public
COPY locales ./locales
COPY bin ./bin
COPY scripts/ensure-build.js scripts/build.js ./scripts/
# `latchkey-admin …` on PATH (the package.json "bin" entry); /app/data belongs to the app user.
RUN chmod 0755 bin/latchkey-admin.js \
 && ln -s /app/bin/latchkey-admin.js /usr/local/bin/latchkey-admin \
 && mkdir -p /app/data \
 && chown node:node /app/data
USER node
# The embedded database (when DATABASE_URL is unset) and the mail outbox live here: keep it on a
# volume, or they are lost when the container is recreated.
VOLUME ["/app/data"]
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))"
CMD ["node", "dist/main.js"]
