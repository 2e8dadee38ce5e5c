#!/usr/bin/env node
// Compiles to dist/ when it is missing or older than any source file: run by
// `prepare` (so `npm ci` builds and a fresh clone's first `npm start` never compiles) and before
// `npm start`/`admin`/`migrate` as a safety net for edited sources. Without src/ (the Docker
// image) there is nothing to compare and dist/ is used as it is.
// Prints only to stderr, so `npm run --silent admin` keeps stdout to one JSON object.
const fs = require('node:fs');
const path = require('node:path');
const { build, hasTypeScript } = require('./build');

const root = path.resolve(__dirname, '..');
const asPrepare = process.argv.includes('--prepare');
const newest = (dir) => {
  let max = 0;
  if (!fs.existsSync(dir)) return max;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    max = Math.max(max, entry.isDirectory() ? newest(full) : fs.statSync(full).mtimeMs);
  }
  return max;
};

const mainJs = path.join(root, 'dist', 'main.js');
const builtAt = fs.existsSync(mainJs) ? fs.statSync(mainJs).mtimeMs : 0;
const sourceAt = Math.max(newest(path.join(root, 'src')), newest(path.join(root, 'migrations')));
if (builtAt < sourceAt) {
  if (!hasTypeScript()) {
    if (asPrepare) {
      // `npm ci --omit=dev` on a machine that runs a dist/ built elsewhere: nothing to do here.
      process.stderr.write(
        'prepare: TypeScript is not installed (production dependencies only); dist/ was not built\n',
      );
      process.exit(0);
    }
    process.stderr.write(
      'error: dist/ is missing or older than src/ and TypeScript is not installed: run `npm ci` (with dev dependencies) to build it\n',
    );
    process.exit(1);
  }
  process.stderr.write('Compiling TypeScript to dist/ …\n');
  try {
    build();
  } catch {
    process.stderr.write('error: the TypeScript build failed (see above)\n');
    process.exit(1);
  }
}
