import fs from 'node:fs';
import path from 'node:path';
import semver from 'semver';
import { parseDockerfile } from '../support/docker-image';
import { NODE_LTS, supportedLines } from '../support/node-releases';

/**
 * The Node.js lines package.json declares are the ones in support, every production dependency
 * runs on the oldest of them, and CI tests on the line the Docker image ships (docs/decisions.md,
 * "Supported Node.js lines").
 */
const ROOT = path.resolve(__dirname, '..', '..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
const pkg = JSON.parse(read('package.json'));
const lock = JSON.parse(read('package-lock.json'));
const declared = new semver.Range(pkg.engines.node);
/** The lowest version of each `||` alternative: `^22.13.0 || ^24.0.0` → 22.13.0 and 24.0.0. */
const minimums = declared.set.map(
  (comparators) => semver.minVersion(new semver.Range(comparators.map((c) => c.value).join(' ')))!.version,
);
const imageMajor = Number(/node:(\d+)/.exec(parseDockerfile(read('Dockerfile')).stages.at(-1)!.from)![1]);

describe('supported Node.js lines', () => {
  it('engines.node names exactly the LTS lines in support today', () => {
    const lines = minimums.map((v) => semver.major(v));
    expect(lines).toEqual(supportedLines(Date.now()));
    // Each alternative stays inside its own line: no odd release, no future line untested.
    for (const major of lines) {
      expect({ major, nextLine: declared.test(`${major + 1}.0.0`) }).toEqual({ major, nextLine: false });
    }
    expect(Object.keys(NODE_LTS).map(Number)).toContain(imageMajor);
  });

  it("every production dependency's engines.node is met by each declared line's minimum", () => {
    const unmet: string[] = [];
    for (const [location, entry] of Object.entries<any>(lock.packages)) {
      if (!location || entry.dev || !entry.engines?.node) continue;
      const range = typeof entry.engines === 'object' ? entry.engines.node : undefined;
      if (!range || !semver.validRange(range)) continue;
      for (const version of minimums) {
        if (!semver.satisfies(version, range))
          unmet.push(
            `${location.replace(/^.*node_modules\//, '')}@${entry.version} needs node ${range}; ${version} is declared`,
          );
      }
    }
    expect(unmet).toEqual([]);
  });

  it('the Docker image ships the newest supported line, and CI pins that line', () => {
    expect(imageMajor).toBe(Math.max(...supportedLines(Date.now())));
    const pinned = read('.ci/node-version').trim();
    expect(semver.valid(pinned)).toBe(pinned);
    expect(semver.major(pinned)).toBe(imageMajor);
    expect(declared.test(pinned)).toBe(true);
    // .ci/run reads both: the image's major from the Dockerfile, the version to install from the pin.
    expect(read('.ci/run')).toContain('.ci/node-version');
  });

  it('README states the prerequisite as package.json declares it', () => {
    const lines = minimums.map((v) => semver.major(v)).join(', ');
    expect(read('README.md')).toContain(`Node.js ${lines.replace(/, (\d+)$/, ' or $1')}`);
  });
});
