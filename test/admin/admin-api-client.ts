import request, { type Response } from 'supertest';
import type { Express } from 'express';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { Services } from '../../src/services';
import { cliActor } from '../../src/domain/admin';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
type OpenApiDocument = {
  paths: Record<
    string,
    Record<string, { responses: Record<string, { content?: Record<string, { schema: object }> }> }>
  >;
  components?: object;
};

const documents = new WeakMap<Express, Promise<OpenApiDocument>>();
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
const validators = new Map<string, ReturnType<typeof ajv.compile>>();

/** The document this app serves (fetched once per app). */
export function adminDocument(app: Express): Promise<OpenApiDocument> {
  let doc = documents.get(app);
  if (!doc) {
    doc = request(app)
      .get('/admin/api/v1/openapi.json')
      .then((res) => {
        if (res.status !== 200) throw new Error(`openapi.json answered ${res.status}`);
        return res.body as OpenApiDocument;
      });
    documents.set(app, doc);
  }
  return doc;
}

/** The documented operation whose path template matches `path` (e.g. /platforms/{platform_guid}). */
function findTemplate(doc: OpenApiDocument, method: Method, path: string): string | undefined {
  const templates = Object.keys(doc.paths).filter((t) => doc.paths[t][method]);
  const matches = templates.filter((t) => new RegExp(`^${t.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path));
  // The most literal template wins (/users/search over /users/{sub}).
  return matches.sort((a, b) => (a.match(/\{/g)?.length ?? 0) - (b.match(/\{/g)?.length ?? 0))[0];
}

/**
 * Fails the test unless the response is one the OpenAPI document describes for this operation and
 * status, with a body that validates against its schema. Every admin API call in the suite goes
 * through here, so the document is checked against every response the tests see.
 */
export async function expectDocumented(app: Express, method: Method, fullPath: string, res: Response) {
  const doc = await adminDocument(app);
  const path = fullPath.replace(/^\/admin\/api\/v1/, '').split('?')[0];
  const template = findTemplate(doc, method, path);
  if (!template)
    throw new Error(`${method.toUpperCase()} ${path} is not in the OpenAPI document (answered ${res.status})`);
  const responses = doc.paths[template][method].responses;
  const documented = responses[String(res.status)];
  if (!documented) {
    throw new Error(
      `${method.toUpperCase()} ${template} answered ${res.status}, which the document does not list (${Object.keys(responses).join(', ')}): ${JSON.stringify(res.body)}`,
    );
  }
  const schema = documented.content?.['application/json']?.schema;
  if (!schema) {
    if (res.text)
      throw new Error(
        `${method.toUpperCase()} ${template} ${res.status} is documented without a body but sent ${res.text.slice(0, 200)}`,
      );
    return;
  }
  const key = `${method} ${template} ${res.status}`;
  let validate = validators.get(key);
  if (!validate) {
    validate = ajv.compile({ ...schema, components: doc.components });
    validators.set(key, validate);
  }
  if (!validate(res.body)) {
    throw new Error(
      `${key}: the body does not match the document: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(res.body, null, 2).slice(0, 2000)}`,
    );
  }
}

/** A supertest client for the admin API with a bearer token; every response is checked against the document. */
export function adminClient(app: Express, token: string | undefined) {
  const call = async (method: Method, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const full = `/admin/api/v1${path}`;
    let req = request(app)[method](full);
    if (token) req = req.set('Authorization', `Bearer ${token}`);
    for (const [k, v] of Object.entries(headers)) req = req.set(k, v);
    const res = body === undefined ? await req : await req.send(body as object);
    await expectDocumented(app, method, full, res);
    return res;
  };
  return {
    get: (path: string) => call('get', path),
    post: (path: string, body: unknown = {}, headers?: Record<string, string>) => call('post', path, body, headers),
    put: (path: string, body: unknown = {}) => call('put', path, body),
    patch: (path: string, body: unknown = {}) => call('patch', path, body),
    delete: (path: string, body?: unknown) => call('delete', path, body),
  };
}

/** A live admin token: global (platformId null) or for one platform. */
export async function adminToken(s: Services, platformId: string | null = null, name = 'test token') {
  return (await s.admin.tokens.create(cliActor('test'), { name, platformId })).token;
}
