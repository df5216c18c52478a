# The handrail worker image used by docker-compose.yml.
FROM node:20-bookworm-slim
# better-sqlite3 builds from source when no prebuilt binary can be fetched.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund && npm rebuild better-sqlite3
COPY . .
# SIGTERM from `docker stop` drains in-flight tasks (the SDK runtime handles it).
CMD ["npx", "tsx", "src/worker/main.ts"]
