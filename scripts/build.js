#!/usr/bin/env node
// `npm run build`: compiles src/ and migrations/ into a new dist/. The output is written beside
// the old one and swapped in only when both compilations succeed, so a removed source file (a
// dropped migration above all) never survives as stale JavaScript, and a failed build keeps the
// last good dist/. Prints only to stderr, so `npm run --silent admin` keeps stdout to one JSON line.
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const root = path.resolve(__dirname, '..');

/** Whether the TypeScript compiler is installed (it is not after `npm ci --omit=dev`). */
function hasTypeScript() {
  try {
    require.resolve('typescript/bin/tsc', { paths: [root] });
    return true;
  } catch {
    return false;
  }
}

function build() {
  const tsc = require.resolve('typescript/bin/tsc', { paths: [root] });
  const dist = path.join(root, 'dist');
  const next = path.join(root, `dist.build-${process.pid}`);
  fs.rmSync(next, { recursive: true, force: true });
  try {
    const run = (project, outDir) =>
      execFileSync(process.execPath, [tsc, '-p', project, '--outDir', outDir], { cwd: root, stdio: ['ignore', 2, 2] });
    run('tsconfig.json', next);
    run(path.join('migrations', 'tsconfig.json'), path.join(next, 'migrations'));
    // A migrated, empty embedded database: a first `npm start` opens it instead of running initdb
    // and every migration (src/db/embedded-template.ts).
    const template = path.join(next, 'cli', 'build-embedded-template.js');
    if (fs.existsSync(template))
      execFileSync(process.execPath, [template, path.join(next, 'pglite-template.tgz')], {
        cwd: root,
        stdio: ['ignore', 2, 2],
      });
    fs.rmSync(dist, { recursive: true, force: true });
    fs.renameSync(next, dist);
  } finally {
    fs.rmSync(next, { recursive: true, force: true });
  }
}

module.exports = { build, hasTypeScript };

if (require.main === module) {
  try {
    build();
  } catch (err) {
    // tsc has already printed the diagnostics.
    process.stderr.write(`build failed${err && err.status ? ` (tsc exit ${err.status})` : ''}; dist/ left as it was\n`);
    process.exit(1);
  }
}
