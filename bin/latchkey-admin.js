#!/usr/bin/env node
// `latchkey-admin …`: the admin CLI from the compiled dist/ (package.json "bin"; on PATH in the
// Docker image). Plain JavaScript on purpose: it needs neither TypeScript nor dev dependencies.
const fs = require('node:fs');
const path = require('node:path');

const entry = path.resolve(__dirname, '..', 'dist', 'cli', 'main.js');
if (!fs.existsSync(entry)) {
  process.stderr.write(
    `error: ${path.relative(process.cwd(), entry) || entry} is missing: run \`npm ci\` or \`npm run build\` first\n`,
  );
  process.exit(1);
}
require(entry);
