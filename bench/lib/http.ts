// Minimal HTTP client for pool minting and the full sign-in row: node:http with a
// keep-alive agent (cheaper than fetch on the client side, which matters on 2 cores),
// a cookie jar, defensive HTML form parsing and a browser-like authorization flow driver.
import http from 'node:http';

export const agent = new http.Agent({ keepAlive: true, maxSockets: 64, maxFreeSockets: 64 });

export interface Resp {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  url: string;
}

export interface ReqOpts {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs?: number;
}

export function request(url: string, opts: ReqOpts = {}): Promise<Resp> {
  const u = new URL(url);
  if (u.hostname !== '127.0.0.1' && u.hostname !== 'localhost') {
    return Promise.reject(new Error(`refusing non-local request to ${u.host}`));
  }
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...(opts.headers ?? {}) };
    if (opts.body !== undefined) headers['content-length'] = Buffer.byteLength(opts.body);
    const req = http.request(
      { agent, method: opts.method ?? 'GET', hostname: u.hostname, port: u.port, path: u.pathname + u.search, headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
            url,
          }),
        );
        res.on('error', reject);
      },
    );
    req.setTimeout(opts.timeoutMs ?? 30_000, () => req.destroy(new Error(`timeout: ${opts.method ?? 'GET'} ${url}`)));
    req.on('error', reject);
    if (opts.body !== undefined) req.write(opts.body);
    req.end();
  });
}

/** RFC 6749 §2.3.1: client id and secret are form-urlencoded before base64. */
export function basicAuth(id: string, secret: string): string {
  const enc = (s: string) => new URLSearchParams({ x: s }).toString().slice(2);
  return 'Basic ' + Buffer.from(`${enc(id)}:${enc(secret)}`).toString('base64');
}

export function form(fields: Record<string, string> | [string, string][]): string {
  return new URLSearchParams(fields as Record<string, string>).toString();
}

export class CookieJar {
  private cookies = new Map<string, string>();
  store(resp: Resp): void {
    const sc = resp.headers['set-cookie'];
    if (!sc) return;
    for (const line of sc) {
      const [pair, ...attrs] = line.split(';');
      const eq = pair.indexOf('=');
      if (eq <= 0) continue;
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attrs.some((a) => {
        const [k, v] = a.trim().split('=');
        if (k.toLowerCase() === 'max-age') return Number(v) <= 0;
        if (k.toLowerCase() === 'expires') return Date.parse(a.trim().slice(8)) < Date.now();
        return false;
      });
      // Paths and domains are ignored: everything is one origin on 127.0.0.1, and
      // the cookie names used by the targets are distinct.
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
  get size(): number {
    return this.cookies.size;
  }
}

// ---------------------------------------------------------------- HTML forms

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };
export function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (m, e: string) => {
    if (e[0] === '#') {
      const code = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
      return Number.isFinite(code) ? String.fromCodePoint(code) : m;
    }
    return ENTITIES[e.toLowerCase()] ?? m;
  });
}

function attrs(tag: string): Record<string, string> {
  const out: Record<string, string> = {};
  const re = /([a-zA-Z_:][-a-zA-Z0-9_:.]*)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(tag))) out[m[1].toLowerCase()] = decodeEntities(m[2] ?? m[3] ?? m[4] ?? '');
  return out;
}

export interface Submit {
  name?: string;
  value: string;
  text: string;
}
export interface HtmlForm {
  action: string;
  method: string;
  fields: [string, string][];
  fieldTypes: Map<string, string>;
  submits: Submit[];
  html: string;
}

export function parseForms(html: string, pageUrl: string): HtmlForm[] {
  const forms: HtmlForm[] = [];
  const formRe = /<form\b([^>]*)>([\s\S]*?)<\/form>/gi;
  let m: RegExpExecArray | null;
  while ((m = formRe.exec(html))) {
    const a = attrs(m[1]);
    const inner = m[2];
    const fields: [string, string][] = [];
    const fieldTypes = new Map<string, string>();
    const submits: Submit[] = [];
    const inputRe = /<input\b([^>]*?)\/?>/gi;
    let i: RegExpExecArray | null;
    while ((i = inputRe.exec(inner))) {
      const ia = attrs(i[1]);
      const type = (ia.type ?? 'text').toLowerCase();
      if (type === 'submit' || type === 'image') {
        submits.push({ name: ia.name, value: ia.value ?? '', text: ia.value ?? '' });
        continue;
      }
      if (!ia.name || 'disabled' in ia) continue;
      if ((type === 'checkbox' || type === 'radio') && !('checked' in ia)) continue;
      fields.push([ia.name, ia.value ?? (type === 'checkbox' ? 'on' : '')]);
      fieldTypes.set(ia.name, type);
    }
    const taRe = /<textarea\b([^>]*)>([\s\S]*?)<\/textarea>/gi;
    while ((i = taRe.exec(inner))) {
      const ta = attrs(i[1]);
      if (ta.name) {
        fields.push([ta.name, decodeEntities(i[2])]);
        fieldTypes.set(ta.name, 'textarea');
      }
    }
    const btnRe = /<button\b([^>]*)>([\s\S]*?)<\/button>/gi;
    while ((i = btnRe.exec(inner))) {
      const ba = attrs(i[1]);
      const type = (ba.type ?? 'submit').toLowerCase();
      if (type !== 'submit') continue;
      submits.push({ name: ba.name, value: ba.value ?? '', text: decodeEntities(i[2].replace(/<[^>]*>/g, '')).trim() });
    }
    forms.push({
      action: new URL(a.action || pageUrl, pageUrl).toString(),
      method: (a.method ?? 'get').toLowerCase(),
      fields,
      fieldTypes,
      submits,
      html: inner,
    });
  }
  return forms;
}

function pageSummary(html: string): string {
  const text = (s?: string) =>
    s
      ?.replace(/<[^>]*>/g, ' ')
      .replace(/\s+/g, ' ')
      .trim();
  const title = text(/<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1]);
  const h1 = text(/<h1[^>]*>([\s\S]*?)<\/h1>/i.exec(html)?.[1]);
  const p = text(/<p\b[^>]*>([\s\S]*?)<\/p>/i.exec(html)?.[1]);
  const out = [title && `title="${title}"`, h1 && `h1="${h1}"`, p && `p="${p.slice(0, 160)}"`]
    .filter(Boolean)
    .join(' ');
  return out || html.slice(0, 160).replace(/\s+/g, ' ');
}

// ---------------------------------------------------------------- flow driver

export interface Credentials {
  email: string;
  password: string;
}
export interface FlowResult {
  code: string;
  state: string | null;
  iss: string | null;
  steps: string[];
}

export class FlowError extends Error {
  constructor(
    message: string,
    readonly steps: string[],
  ) {
    super(`${message} [${steps.join(' → ')}]`);
  }
}

/**
 * Drives an authorization request like a browser without JavaScript: follows redirects,
 * fills a sign-in form (email/password), accepts consent (decision=allow), picks the
 * account in an account chooser, until the redirect to `redirectUri`. Hidden fields
 * (such as `_csrf`) are posted back as found.
 */
export async function authorizeFlow(
  jar: CookieJar,
  authorizeUrl: string,
  redirectUri: string,
  creds: Credentials,
  maxSteps = 12,
): Promise<FlowResult> {
  const steps: string[] = [];
  let url = authorizeUrl;
  let method = 'GET';
  let body: string | undefined;
  let posts = 0;
  for (let step = 0; step < maxSteps; step++) {
    const headers: Record<string, string> = { accept: 'text/html,application/xhtml+xml' };
    const cookie = jar.header();
    if (cookie) headers.cookie = cookie;
    if (body !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
    const resp = await request(url, { method, headers, body });
    jar.store(resp);
    steps.push(`${method} ${new URL(url).pathname} ${resp.status}`);
    if (resp.status >= 300 && resp.status < 400) {
      const loc = resp.headers.location;
      if (!loc) throw new FlowError('redirect without Location', steps);
      const next = new URL(loc, url);
      if (next.toString().startsWith(redirectUri)) {
        const err = next.searchParams.get('error');
        if (err)
          throw new FlowError(`authorization error ${err}: ${next.searchParams.get('error_description') ?? ''}`, steps);
        const code = next.searchParams.get('code');
        if (!code) throw new FlowError('redirect to client without code', steps);
        return { code, state: next.searchParams.get('state'), iss: next.searchParams.get('iss'), steps };
      }
      if (resp.status === 307 || resp.status === 308) {
        url = next.toString();
        continue;
      }
      url = next.toString();
      method = 'GET';
      body = undefined;
      continue;
    }
    if (resp.status !== 200) {
      throw new FlowError(`unexpected HTTP ${resp.status}: ${pageSummary(resp.body)}`, steps);
    }
    const forms = parseForms(resp.body, url);
    const pick = chooseForm(forms, creds, resp.body, url);
    if (!pick) throw new FlowError(`no usable form on page: ${pageSummary(resp.body)}`, steps);
    if (pick.kind === 'link') {
      url = pick.url;
      method = 'GET';
      body = undefined;
      continue;
    }
    if (++posts > 4) throw new FlowError('too many form submissions (sign-in rejected?)', steps);
    const { form: f, fields } = pick;
    if (f.method === 'post') {
      url = f.action;
      method = 'POST';
      body = new URLSearchParams(fields).toString();
    } else {
      const u = new URL(f.action);
      for (const [k, v] of fields) u.searchParams.append(k, v);
      url = u.toString();
      method = 'GET';
      body = undefined;
    }
  }
  throw new FlowError(`no code after ${maxSteps} steps`, steps);
}

type Pick = { kind: 'form'; form: HtmlForm; fields: [string, string][] } | { kind: 'link'; url: string };

function withSubmit(_form: HtmlForm, fields: [string, string][], s?: Submit): [string, string][] {
  if (s?.name) fields.push([s.name, s.value]);
  return fields;
}

function chooseForm(forms: HtmlForm[], creds: Credentials, html: string, pageUrl: string): Pick | undefined {
  // 1. Sign-in: a form with a password field.
  const login = forms.find((f) => [...f.fieldTypes.values()].includes('password'));
  if (login) {
    const fields = login.fields.filter(([k]) => k !== 'email' && k !== 'password');
    const emailName = [...login.fieldTypes].find(([k, t]) => k === 'email' || t === 'email')?.[0] ?? 'email';
    const pwName = [...login.fieldTypes].find(([, t]) => t === 'password')?.[0] ?? 'password';
    const rest = fields.filter(([k]) => k !== emailName && k !== pwName);
    rest.push([emailName, creds.email], [pwName, creds.password]);
    const s = login.submits.find((x) => /sign\s*in|log\s*in|continue/i.test(x.text)) ?? login.submits[0];
    return { kind: 'form', form: login, fields: withSubmit(login, rest, s) };
  }
  // 2. Consent: a submit named "decision" (or a button labelled Allow).
  for (const f of forms) {
    const allow =
      f.submits.find((s) => s.name === 'decision' && /allow/i.test(s.value)) ??
      f.submits.find((s) => /^\s*allow\s*$/i.test(s.text));
    if (allow) {
      const fields = f.fields.filter(([k]) => k !== 'decision');
      if (!allow.name && !f.fields.some(([k]) => k === 'decision')) fields.push(['decision', 'allow']);
      return { kind: 'form', form: f, fields: withSubmit(f, fields, allow) };
    }
    if (f.fields.some(([k, v]) => k === 'decision' && v === 'allow'))
      return { kind: 'form', form: f, fields: [...f.fields] };
  }
  // 3. Account chooser: a form (or link) that names the account's email and is not a sign-out.
  const email = creds.email.toLowerCase();
  for (const f of forms) {
    if (!f.html.toLowerCase().includes(email)) continue;
    if (/sign[\s-]*out|logout/i.test(f.action)) continue;
    const s =
      f.submits.find((x) => x.text.toLowerCase().includes(email) || x.value.toLowerCase().includes(email)) ??
      f.submits.find((x) => !/sign\s*out|remove|forget/i.test(x.text));
    return { kind: 'form', form: f, fields: withSubmit(f, [...f.fields], s) };
  }
  const linkRe = /<a\b([^>]*)>([\s\S]*?)<\/a>/gi;
  let m: RegExpExecArray | null;
  while ((m = linkRe.exec(html))) {
    const a = attrs(m[1]);
    if (a.href && m[2].toLowerCase().includes(email) && !/sign[\s-]*out|logout/i.test(a.href)) {
      return { kind: 'link', url: new URL(a.href, pageUrl).toString() };
    }
  }
  return undefined;
}

/** Bounded pool of `concurrency` async workers running `task` until `count` tasks have completed. */
export async function mapPool<T>(
  count: number,
  concurrency: number,
  task: (i: number, worker: number) => Promise<T>,
): Promise<T[]> {
  const out: T[] = new Array(count);
  let next = 0;
  const workers = Array.from({ length: Math.min(concurrency, count) }, async (_, w) => {
    while (next < count) {
      const i = next++;
      out[i] = await task(i, w);
    }
  });
  await Promise.all(workers);
  return out;
}
