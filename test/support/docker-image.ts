import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

/**
 * No Docker engine runs here: this reads the repository's Dockerfile and carries out its stages'
 * instructions in a directory that stands for the image's root filesystem, so the runtime stage's
 * file set is exactly what the Dockerfile's own lines put there. Only the instructions and RUN
 * commands the Dockerfile uses are known; any other one fails loudly instead of being skipped.
 */

const exec = promisify(execFile);

export interface Instruction {
  op: string;
  args: string;
}
export interface Stage {
  from: string;
  name?: string;
  instructions: Instruction[];
}

export function parseDockerfile(text: string): { stages: Stage[] } {
  const logical: string[] = [];
  let current = '';
  for (const raw of text.split('\n')) {
    const line = raw.trimEnd();
    if (/^\s*#/.test(line) || (!current && !line.trim())) continue; // comments, also inside continuations
    if (line.endsWith('\\')) {
      current += `${line.slice(0, -1)} `;
      continue;
    }
    logical.push(current + line);
    current = '';
  }
  const args: Record<string, string> = {};
  const stages: Stage[] = [];
  for (const l of logical) {
    const m = /^\s*(\w+)\s+([\s\S]*)$/.exec(l);
    if (!m) continue;
    const op = m[1].toUpperCase();
    const rest = m[2].trim();
    if (op === 'ARG' && !stages.length) {
      const [k, v = ''] = rest.split('=');
      args[k] = v;
    } else if (op === 'FROM') {
      const [image, , name] = rest.replace(/\$\{(\w+)\}|\$(\w+)/g, (_, a, b) => args[a ?? b] ?? '').split(/\s+/);
      stages.push({ from: image, name, instructions: [] });
    } else {
      stages[stages.length - 1].instructions.push({ op, args: rest });
    }
  }
  return { stages };
}

/** `ENV A=1 B=2` (and the legacy `ENV A 1`) of one stage, in order. */
export function stageEnv(stage: Stage): Record<string, string> {
  const env: Record<string, string> = {};
  for (const i of stage.instructions.filter((x) => x.op === 'ENV')) {
    if (!i.args.includes('=')) {
      const [k, ...v] = i.args.split(/\s+/);
      env[k] = v.join(' ');
      continue;
    }
    for (const pair of i.args.match(/\w+=("[^"]*"|\S*)/g) ?? []) {
      const at = pair.indexOf('=');
      env[pair.slice(0, at)] = pair.slice(at + 1).replace(/^"|"$/g, '');
    }
  }
  return env;
}

export const execForm = (args: string): string[] => JSON.parse(args);
export const all = (stage: Stage, op: string) => stage.instructions.filter((i) => i.op === op);
export const last = (stage: Stage, op: string) => all(stage, op).at(-1);

/** .dockerignore's entries: each names a path of the build context that COPY never sees. */
function ignoredBy(context: string): (relative: string) => boolean {
  const file = path.join(context, '.dockerignore');
  const entries = fs.existsSync(file)
    ? fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l && !l.startsWith('#'))
    : [];
  return (relative) => entries.some((e) => relative === e || relative.startsWith(`${e}/`));
}

export interface AssembledStage {
  /** The directory standing for the stage's `/`. */
  root: string;
  /** Where its last WORKDIR is. */
  workdir: string;
  /** Its ENV, with absolute paths moved under `root`. */
  env: Record<string, string>;
  /** Its `/usr/local/bin`, where `ln -s` puts commands on PATH. */
  binDir: string;
  /** The image path `p` as a path on this machine. */
  at(p: string): string;
}

export interface AssembleOptions {
  /** The build context (the repository). */
  context: string;
  /** Where the stages' roots are made, one folder each. */
  into: string;
  /** The environment for the stage's RUN commands (PATH with the Node the image has). */
  env: Record<string, string>;
}

/**
 * Carries out every stage of the Dockerfile in order (a later stage's `COPY --from` reads an
 * earlier one's root) and returns each stage by name and the last one as `runtime`.
 */
export async function assembleImage(dockerfile: { stages: Stage[] }, options: AssembleOptions) {
  const byName = new Map<string, AssembledStage>();
  let runtime: AssembledStage | undefined;
  for (const [index, stage] of dockerfile.stages.entries()) {
    runtime = await assembleStage(stage, path.join(options.into, stage.name ?? `stage-${index}`), byName, options);
    if (stage.name) byName.set(stage.name, runtime);
  }
  return { stages: byName, runtime: runtime! };
}

async function assembleStage(
  stage: Stage,
  root: string,
  earlier: Map<string, AssembledStage>,
  options: AssembleOptions,
): Promise<AssembledStage> {
  fs.mkdirSync(root, { recursive: true });
  const at = (p: string) => path.join(root, p);
  let workdir = '/';
  const resolve = (p: string) => (path.posix.isAbsolute(p) ? p : path.posix.join(workdir, p));
  const env: Record<string, string> = {};
  const binDir = at('/usr/local/bin');
  fs.mkdirSync(binDir, { recursive: true });
  const isIgnored = ignoredBy(options.context);

  const copy = (args: string) => {
    const words = args.split(/\s+/);
    const from = /^--from=(.+)$/.exec(words[0])?.[1];
    const [sources, dest] = [words.slice(from ? 1 : 0, -1), words.at(-1)!];
    const destPath = resolve(dest);
    const intoDirectory = dest.endsWith('/') || sources.length > 1;
    for (const source of sources) {
      let sourcePath: string;
      if (from) {
        const stageRoot = earlier.get(from);
        if (!stageRoot) throw new Error(`COPY --from=${from}: no earlier stage of that name`);
        sourcePath = stageRoot.at(source);
      } else {
        const relative = path.posix.normalize(source).replace(/^\.\//, '').replace(/\/$/, '');
        if (isIgnored(relative)) throw new Error(`COPY ${source}: .dockerignore excludes it from the build context`);
        sourcePath = path.join(options.context, relative);
      }
      if (!fs.existsSync(sourcePath)) throw new Error(`COPY ${source}: not found (${sourcePath})`);
      // Docker copies a directory's contents into the destination, and a file into a destination
      // directory under its own name.
      const isDirectory = fs.statSync(sourcePath).isDirectory();
      const target = isDirectory || !intoDirectory ? at(destPath) : path.join(at(destPath), path.basename(sourcePath));
      const contextRelative = (p: string) => path.relative(options.context, p).split(path.sep).join('/');
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.cpSync(sourcePath, target, {
        recursive: true,
        verbatimSymlinks: true,
        filter: (p) => from !== undefined || !isIgnored(contextRelative(p)),
      });
    }
  };

  const runCommand = async (words: string[]) => {
    const [command, ...args] = words;
    const cwd = at(workdir);
    if (command === 'npm' && args[0] === 'cache') return; // `npm cache clean` would empty this machine's cache, not a layer
    if (command === 'npm' && (args[0] === 'ci' || args[0] === 'run')) {
      // The machine's npm cache stands for the registry (the lockfile's integrity hashes still hold).
      const extra = args[0] === 'ci' ? ['--prefer-offline'] : [];
      await exec('npm', [...args, ...extra], { cwd, env: { ...options.env, ...env }, maxBuffer: 64 * 1024 * 1024 });
      return;
    }
    if (command === 'chmod') {
      const [mode, ...files] = args;
      for (const f of files) fs.chmodSync(at(resolve(f)), parseInt(mode, 8));
      return;
    }
    if (command === 'ln' && args[0] === '-s' && args.length === 3) {
      const link = at(resolve(args[2]));
      fs.mkdirSync(path.dirname(link), { recursive: true });
      fs.symlinkSync(at(resolve(args[1])), link);
      return;
    }
    if (command === 'mkdir' && args[0] === '-p') {
      for (const d of args.slice(1)) fs.mkdirSync(at(resolve(d)), { recursive: true });
      return;
    }
    if (command === 'chown') {
      // No other users here: the owner cannot be given, but the paths must exist.
      for (const f of args.slice(1).filter((a) => !a.startsWith('-'))) {
        if (!fs.existsSync(at(resolve(f)))) throw new Error(`RUN chown: ${f} does not exist`);
      }
      return;
    }
    throw new Error(
      `RUN ${words.join(' ')}: this test does not know how to carry out "${command}"; teach it in test/support/docker-image.ts`,
    );
  };

  for (const instruction of stage.instructions) {
    switch (instruction.op) {
      case 'WORKDIR':
        workdir = resolve(instruction.args);
        fs.mkdirSync(at(workdir), { recursive: true });
        break;
      case 'ENV':
        Object.assign(env, stageEnv({ ...stage, instructions: [instruction] }));
        break;
      case 'COPY':
        copy(instruction.args);
        break;
      case 'RUN':
        if (instruction.args.startsWith('[')) throw new Error('RUN in exec form is not carried out by this test');
        for (const part of instruction.args.split('&&')) await runCommand(part.trim().split(/\s+/));
        break;
      case 'ARG':
      case 'USER':
      case 'VOLUME':
      case 'EXPOSE':
      case 'HEALTHCHECK':
      case 'CMD':
      case 'LABEL':
        break; // metadata, checked by the tests that read them
      default:
        throw new Error(
          `${instruction.op}: this test does not know how to carry it out; teach it in test/support/docker-image.ts`,
        );
    }
  }
  const mappedEnv = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v.startsWith('/') ? at(v) : v]));
  return { root, workdir: at(workdir), env: mappedEnv, binDir, at };
}
