#!/usr/bin/env node
// Compiles to dist/ when it is missing or older than any source file (DESIGN §11).
// Prints only to stderr, so `npm run --silent admin` keeps stdout to one JSON object.
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const root = path.resolve(__dirname, '..');
const newest = (dir) => {
  let max = 0;
  if (!fs.existsSync(dir)) return max;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    max = Math.max(max, entry.isDirectory() ? newest(full) : fs.statSync(full).mtimeMs);
  }
  return max;
};

const builtAt = fs.existsSync(path.join(root, 'dist', 'main.js')) ? fs.statSync(path.join(root, 'dist', 'main.js')).mtimeMs : 0;
const sourceAt = Math.max(newest(path.join(root, 'src')), newest(path.join(root, 'migrations')));
if (builtAt < sourceAt) {
  process.stderr.write('Compiling TypeScript to dist/ …\n');
  const tsc = require.resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: root, stdio: ['ignore', 2, 2] });
  execFileSync(process.execPath, [tsc, '-p', 'migrations/tsconfig.json'], { cwd: root, stdio: ['ignore', 2, 2] });
  fs.utimesSync(path.join(root, 'dist', 'main.js'), new Date(), new Date());
}
