import { execFile } from 'node:child_process';
import request from 'supertest';
import { buildTestApp } from '../helpers';

type Operation = {
  operationId?: string;
  summary?: string;
  tags?: string[];
  responses: Record<string, { content?: Record<string, { schema: { $ref?: string } }> }>;
};

/**
 * @seriousme/openapi-schema-validator is ESM-only and reads its schemas through import.meta, which
 * jest's CommonJS runtime cannot load: it runs in a child node process, the document on stdin.
 */
function validateOpenApi(document: unknown): Promise<{ valid: boolean; errors?: unknown }> {
  const script = `
    import { Validator } from '@seriousme/openapi-schema-validator';
    let text = '';
    process.stdin.on('data', (d) => { text += d; }).on('end', async () => {
      const result = await new Validator().validate(JSON.parse(text));
      process.stdout.write(JSON.stringify({ valid: result.valid, errors: result.errors }));
    });`;
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      ['--input-type=module', '-e', script],
      { cwd: process.cwd() },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`${err.message}\n${stderr}`));
        else resolve(JSON.parse(stdout));
      },
    );
    child.stdin!.end(JSON.stringify(document));
  });
}

describe('GET /admin/api/v1/openapi.json', () => {
  let t: Awaited<ReturnType<typeof buildTestApp>>;
  let res: request.Response;
  beforeAll(async () => {
    t = await buildTestApp();
    res = await request(t.app).get('/admin/api/v1/openapi.json');
  });
  afterAll(() => t.close());

  const operations = () =>
    Object.entries(res.body.paths as Record<string, Record<string, Operation>>).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => ({ name: `${method.toUpperCase()} ${path}`, op })),
    );

  it('is served without a token, as JSON, never cached', () => {
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['cache-control']).toMatch(/no-store/);
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    expect(res.body.openapi).toBe('3.1.0');
    const result = await validateOpenApi(res.body);
    expect(result).toEqual({ valid: true });
  });

  it('and the validator refuses a broken one (the check can fail)', async () => {
    const broken = { ...res.body, paths: { '/x': { get: { responses: { 200: { content: 'nope' } } } } } };
    expect((await validateOpenApi(broken)).valid).toBe(false);
  });

  it('gives every operation a unique operationId, a summary, a tag, and 400/401/429 errors with the Error schema', () => {
    const ops = operations();
    expect(ops.length).toBeGreaterThan(20);
    const problems: string[] = [];
    for (const { name, op } of ops) {
      if (!op.operationId) problems.push(`${name}: no operationId`);
      if (!op.summary?.trim()) problems.push(`${name}: no summary`);
      if (!op.tags?.length) problems.push(`${name}: no tag`);
      for (const status of ['400', '401', '429']) {
        const schema = op.responses[status]?.content?.['application/json']?.schema;
        if (schema?.$ref !== '#/components/schemas/Error') problems.push(`${name}: ${status} is not an Error`);
      }
    }
    expect(problems).toEqual([]);
    const ids = ops.map((o) => o.op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(res.body.components.schemas.Error).toMatchObject({
      type: 'object',
      required: ['error', 'error_description'],
    });
  });

  it('documents the keys, throttles, mail and audit operations', () => {
    const names = operations().map((o) => o.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'GET /platforms/{platform_guid}/keys',
        'POST /platforms/{platform_guid}/keys/rotate',
        'POST /platforms/{platform_guid}/keys/{kid}/retire',
        'GET /platforms/{platform_guid}/throttles',
        'DELETE /platforms/{platform_guid}/throttles',
        'GET /mail',
        'GET /platforms/{platform_guid}/mail',
        'POST /platforms/{platform_guid}/mail/{mail_id}/retry',
        'POST /platforms/{platform_guid}/mail/retry-dead',
        'GET /audit-events',
        'GET /platforms/{platform_guid}/audit-events',
      ]),
    );
  });
});
