import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * The layers' arrows (CONVENTIONS.md "Second wave", docs/architecture.md): reads every import of
 * src/ and fails on a forbidden one, so the shape survives new code. RULES is the one list: the
 * table "Arrow the guard refuses | Why" in docs/architecture.md must say exactly the same.
 */
const SRC = path.resolve(__dirname, '../../src');
const ARCHITECTURE = path.resolve(__dirname, '../../docs/architecture.md');

function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return filesUnder(full);
    return e.name.endsWith('.ts') ? [full] : [];
  });
}

interface SourceFile {
  /** Relative to src/, without `.ts`: `http/oauth/token.router`. */
  name: string;
  text: string;
}

interface Arrow {
  from: string;
  /** The file imported, named as SourceFile.name (`services` resolves to `services/index`); outside src/ as written. */
  to: string;
  typeOnly: boolean;
}

/** The file a relative specifier names: `x.ts`, else `x/index.ts`. */
function resolve(fromFile: string, spec: string): string {
  const target = path.resolve(path.dirname(fromFile), spec);
  const file = [`${target}.ts`, path.join(target, 'index.ts')].find((f) => fs.existsSync(f)) ?? target;
  return path.relative(SRC, file).replace(/\.ts$/, '');
}

/**
 * Every relative import of a file, as the compiler reads it: `import`/`export … from` (multi-line,
 * `import type`, `export type`), side-effect imports, `import('…')` calls and `import('…').T` types.
 */
function arrowsOf(file: string, text: string): Arrow[] {
  const from = path.relative(SRC, file).replace(/\.ts$/, '');
  const out: Arrow[] = [];
  const add = (spec: ts.Node | undefined, typeOnly: boolean) => {
    if (spec && ts.isStringLiteralLike(spec) && spec.text.startsWith('.'))
      out.push({ from, to: resolve(file, spec.text), typeOnly });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) add(node.moduleSpecifier, Boolean(node.importClause?.isTypeOnly));
    else if (ts.isExportDeclaration(node)) add(node.moduleSpecifier, node.isTypeOnly);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node.argument.literal, true);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword)
      add(node.arguments[0], false);
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true));
  return out;
}

function readSource() {
  const files: SourceFile[] = [];
  const arrows: Arrow[] = [];
  for (const file of filesUnder(SRC)) {
    const text = fs.readFileSync(file, 'utf8');
    files.push({ name: path.relative(SRC, file).replace(/\.ts$/, ''), text });
    arrows.push(...arrowsOf(file, text));
  }
  return { files, arrows };
}
type Source = ReturnType<typeof readSource>;

const under = (p: string, dir: string) => p === dir || p.startsWith(`${dir}/`);
const dirOf = (file: string) => file.slice(0, file.lastIndexOf('/'));
const shown = (a: Arrow) => `${a.from} → ${a.to}`;

/** A file of routes: `*.router.ts` or `*.routes.ts`, wherever its surface keeps it under src/http/. */
const isRouter = (p: string) => under(p, 'http') && /\.(router|routes)$/.test(p);

/** The import cycles among src/ files (type-only imports too): each strongly connected group, sorted. */
function cycles(arrows: Arrow[]): string[] {
  const next = new Map<string, Set<string>>();
  for (const a of arrows) {
    if (!next.has(a.from)) next.set(a.from, new Set());
    next.get(a.from)!.add(a.to);
  }
  // Tarjan's algorithm: a group of more than one file, or a file importing itself, is a cycle.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[] = [];
  const connect = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const group: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      group.push(w);
    } while (w !== v);
    if (group.length > 1 || next.get(v)?.has(v)) found.push(group.sort().join(' ↔ '));
  };
  for (const v of next.keys()) if (!index.has(v)) connect(v);
  return found.sort();
}

interface Rule {
  /** The first column of the table in docs/architecture.md, word for word. */
  refuses: string;
  /** Its second column. */
  why: string;
  /** What breaks the rule, one line each; none when it holds. */
  breaches: (src: Source) => string[];
}

/** A rule over single arrows. */
const arrowRule = (breaks: (a: Arrow) => boolean) => (src: Source) => src.arrows.filter(breaks).map(shown);

const RULES: Rule[] = [
  {
    refuses: 'routers (`*.router.ts`, `*.routes.ts`) → repositories, crypto, db',
    why: 'a router parses, calls a service, answers; the rules live below',
    breaches: arrowRule((a) => isRouter(a.from) && ['repositories', 'crypto', 'db'].some((d) => under(a.to, d))),
  },
  {
    // A folder of routes (admin API, console) may have one file that assembles its siblings.
    refuses: 'router → a router in another folder',
    why: 'shared HTTP helpers go to `src/http/urls.ts`, `src/http/oauth/authorize-response.ts`, `src/http/pages/`',
    breaches: arrowRule((a) => isRouter(a.from) && isRouter(a.to) && dirOf(a.from) !== dirOf(a.to)),
  },
  {
    refuses: 'services → http',
    why: 'the services serve the CLI and tests too; they see the browser only through ports (`BrowserAccounts`)',
    breaches: arrowRule((a) => under(a.from, 'services') && under(a.to, 'http')),
  },
  {
    refuses: 'services → presenters',
    why: 'services return plain data (shared shapes in `src/domain/`); the doors choose the wire shape',
    breaches: arrowRule((a) => under(a.from, 'services') && under(a.to, 'presenters')),
  },
  {
    refuses: 'repositories → services, errors',
    why: 'SQL knows no OAuth errors; services decide what a missing row means',
    breaches: arrowRule((a) => under(a.from, 'repositories') && (under(a.to, 'services') || a.to === 'errors')),
  },
  {
    refuses: 'presenters → db, http, mail, jobs, cli; value imports from repositories/services',
    why: 'presenters are pure functions',
    breaches: arrowRule(
      (a) =>
        under(a.from, 'presenters') &&
        (['db', 'http', 'mail', 'jobs', 'cli'].some((d) => under(a.to, d)) ||
          (!a.typeOnly && ['repositories', 'services'].some((d) => under(a.to, d)))),
    ),
  },
  {
    refuses: 'domain → anything outside `src/domain`',
    why: 'the domain is the bottom: types and pure rules',
    breaches: arrowRule((a) => under(a.from, 'domain') && !under(a.to, 'domain')),
  },
  {
    refuses: 'an import cycle among `src/` files, type-only imports included',
    why: 'every arrow points one way; a cycle means a shared type lives in the wrong file (move it to the lower one or to `src/domain/`)',
    breaches: (src) => cycles(src.arrows),
  },
  {
    refuses: "anything outside `src/services/` → the services' own dependencies (`s.deps`)",
    why: 'each door gets what it reads as arguments: createApp hands the HTTP wing its `HttpDeps` (`src/http/http-deps.ts`), the CLI and jobs take config and logger; database work is a service function',
    breaches: (src) =>
      src.files.filter((f) => !under(f.name, 'services') && /\.deps\b/.test(f.text)).map((f) => f.name),
  },
  {
    refuses: '`src/wire/` → anything outside `src/wire` and `src/domain`',
    why: 'the admin wire shapes are shared by the API, the CLI and the console; they describe JSON, they do not call anything',
    breaches: arrowRule((a) => under(a.from, 'wire') && !under(a.to, 'wire') && !under(a.to, 'domain')),
  },
  {
    refuses: '`src/errors.ts` → anything outside `src/domain`',
    why: 'throwing an error never imports a page',
    breaches: arrowRule((a) => a.from === 'errors' && !under(a.to, 'domain')),
  },
  {
    refuses: 'anything but `src/http/` and `src/app.ts` → `src/http/errors/`',
    why: "services and the CLI throw an OAuthError; how it is answered is the HTTP wing's business",
    breaches: arrowRule((a) => under(a.to, 'http/errors') && !under(a.from, 'http') && a.from !== 'app'),
  },
];

/** The rows of the table under "| Arrow the guard refuses | Why |", each as its two cells. */
function documentedRules(): string[][] {
  const lines = fs.readFileSync(ARCHITECTURE, 'utf8').split('\n');
  const start = lines.findIndex((l) => /^\|\s*Arrow the guard refuses\s*\|\s*Why\s*\|$/.test(l));
  if (start < 0) return [];
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(line.replace(/^\|\s*|\s*\|$/g, '').split(/\s+\|\s+/));
  }
  return rows;
}

describe('import guard: the layers of src/', () => {
  const src = readSource();

  it('finds the imports it checks, of every form', () => {
    expect(src.arrows.length).toBeGreaterThan(300);
    const has = (from: string, to: string, typeOnly: boolean) =>
      src.arrows.some((a) => a.from === from && a.to === to && a.typeOnly === typeOnly);
    expect(has('http/interaction/interaction.router', 'http/pages/interaction.pages', false)).toBe(true);
    expect(has('app', 'services/index', false)).toBe(true); // a folder's index
    expect(has('http/session/passkey-session', 'domain/user', true)).toBe(true); // import('…').T in a type
    expect(has('db/index', 'db/embedded', false)).toBe(true); // await import('…')
    expect(has('app', 'http/locals', false)).toBe(true); // a side-effect import
    expect(src.arrows.some((a) => a.typeOnly && a.from.startsWith('http/'))).toBe(true); // import type
  });

  it('reads multi-line imports, `import type`, `export type … from` and `import(…)` types', () => {
    const text = [
      "import {\n  a,\n  b,\n} from './multi';",
      "import type { T } from './types';",
      "export type { U } from './reexported';",
      "export * from './everything';",
      "type V = import('./inline').V;",
      "// import { gone } from './comment';",
    ].join('\n');
    const found = arrowsOf(path.join(SRC, 'sample.ts'), text).map((a) => `${a.to}${a.typeOnly ? ' (type)' : ''}`);
    expect(found).toEqual(['multi', 'types (type)', 'reexported (type)', 'everything', 'inline (type)']);
  });

  it('lists in docs/architecture.md exactly the rules it checks, in order', () => {
    expect(documentedRules()).toEqual(RULES.map((r) => [r.refuses, r.why]));
  });

  for (const rule of RULES) {
    it(`refuses ${rule.refuses}`, () => {
      expect(rule.breaches(src)).toEqual([]);
    });
  }
});
