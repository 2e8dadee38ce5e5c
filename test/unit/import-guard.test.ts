import fs from 'node:fs';
import path from 'node:path';

/**
 * The layers' arrows (CONVENTIONS.md "Second wave", docs/architecture.md): reads every import of
 * src/ and fails on a forbidden one, so the shape survives new code.
 */
const SRC = path.resolve(__dirname, '../../src');

function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return filesUnder(full);
    return e.name.endsWith('.ts') ? [full] : [];
  });
}

interface Arrow {
  from: string;
  to: string;
  typeOnly: boolean;
}

const IMPORT = /^\s*(import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]/gm;

function arrows(): Arrow[] {
  const out: Arrow[] = [];
  for (const file of filesUnder(SRC)) {
    const text = fs.readFileSync(file, 'utf8');
    for (const m of text.matchAll(IMPORT)) {
      const spec = m[3];
      if (!spec.startsWith('.')) continue;
      const to = path.relative(SRC, path.resolve(path.dirname(file), spec));
      out.push({ from: path.relative(SRC, file).replace(/\.ts$/, ''), to, typeOnly: Boolean(m[2]) });
    }
  }
  return out;
}

const under = (p: string, dir: string) => p === dir || p.startsWith(`${dir}/`);

/** Each rule: a name, and whether an arrow breaks it. */
const dirOf = (file: string) => file.slice(0, file.lastIndexOf('/'));

/** A file of routes: `*.router.ts` or `*.routes.ts`, wherever its surface keeps it under src/http/. */
const isRouter = (p: string) => under(p, 'http') && /\.(router|routes)$/.test(p);

const RULES: { name: string; breaks: (a: Arrow) => boolean }[] = [
  { name: 'routers do not touch repositories, crypto or the database', breaks: (a) => isRouter(a.from) && ['repositories', 'crypto', 'db'].some((d) => under(a.to, d)) },
  // A folder of routes (admin API, console) may have one file that assembles its siblings.
  { name: 'a router does not import another router', breaks: (a) => isRouter(a.from) && isRouter(a.to) && dirOf(a.from) !== dirOf(a.to) },
  { name: 'services do not import HTTP', breaks: (a) => under(a.from, 'services') && under(a.to, 'http') },
  { name: 'repositories do not import services or errors', breaks: (a) => under(a.from, 'repositories') && (under(a.to, 'services') || a.to === 'errors') },
  {
    name: 'presenters do no I/O (types only from repositories and services)',
    breaks: (a) => under(a.from, 'presenters') && (['db', 'http', 'mail', 'jobs', 'cli'].some((d) => under(a.to, d)) || (!a.typeOnly && ['repositories', 'services'].some((d) => under(a.to, d)))),
  },
  { name: 'the domain imports only the domain', breaks: (a) => under(a.from, 'domain') && !under(a.to, 'domain') },
  // Throwing an error never imports a page: how an error is answered is http/errors/.
  { name: 'the error type (src/errors.ts) imports only the domain', breaks: (a) => a.from === 'errors' && !under(a.to, 'domain') },
  { name: 'only the HTTP wing and app.ts (which mounts the handler) import http/errors', breaks: (a) => under(a.to, 'http/errors') && !under(a.from, 'http') && a.from !== 'app' },
];

describe('import guard: the layers of src/', () => {
  const all = arrows();

  it('finds the imports it checks', () => {
    expect(all.length).toBeGreaterThan(300);
    expect(all.some((a) => a.from === 'http/interaction/interaction.router' && a.to === 'http/pages/interaction.pages')).toBe(true);
  });

  for (const rule of RULES) {
    it(rule.name, () => {
      expect(all.filter(rule.breaks).map((a) => `${a.from} → ${a.to}`)).toEqual([]);
    });
  }
});
