import express, { type Request, type Response, type Router } from 'express';
import type { OpenAPIRegistry, RouteConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import type { AdminActor } from '../../../domain/admin';
import { OAuthError } from '../../../errors';
import { parseInput } from '../../../services/admin/parse-input';
import { ErrorResponse } from '../../../wire/admin/common.schemas';
import { auditContext } from '../../request/audit-context';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
type Schema = z.ZodType;
type Infer<S> = S extends z.ZodType ? z.infer<S> : undefined;

/** One admin API operation: its HTTP shape (validated and documented from the same zod schemas) and its handler. */
export interface AdminOperation<
  P extends Schema | undefined,
  Q extends Schema | undefined,
  B extends Schema | undefined,
  R extends Schema | undefined,
> {
  method: Method;
  /** Express style, e.g. `/platforms/:platform_guid/clients`; the document shows `{platform_guid}`. */
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  description?: string;
  params?: P;
  query?: Q;
  body?: B;
  /**
   * The body is a file of one of `contentTypes` (not JSON): read as bytes (up to `maxBytes`; the
   * handler checks the content) and handed to the handler as `upload`. Another type is a 415.
   */
  upload?: { contentTypes: readonly string[]; maxBytes: number; description: string };
  /** The body may be left out altogether (no Content-Type, no content): it is then read as `{}`. */
  bodyOptional?: boolean;
  /** 200 with this body, 201 for a creation, or 204 with none (`response` undefined). */
  status: 200 | 201 | 204;
  response?: R;
  responseDescription: string;
  /** Statuses besides 400/401/429 this operation answers with an Error (404 not found, 403 global only, 409 conflict). */
  errors?: Array<403 | 404 | 409>;
  handler: (input: {
    params: Infer<P>;
    query: Infer<Q>;
    body: Infer<B>;
    upload: { contentType: string; bytes: Buffer };
    actor: AdminActor;
    req: Request;
  }) => Promise<Infer<R>>;
}

const ERROR_TEXT: Record<number, string> = {
  400: 'The request is invalid (error_description says which field and why)',
  401: 'No admin token, or not a live one',
  403: 'The token may not do this (a platform token on a global operation)',
  404: 'No such resource, or not one this token may see',
  409: 'The change conflicts with the current state',
  413: 'The body is far larger than the limit',
  415: 'The body is not of the type the operation takes (application/json, or the file types it lists)',
  429: 'Too many requests: wait Retry-After seconds',
};

/** The admin API actor of a request: the token's identity (set by authentication) with the request's audit context. */
export function actorOf(req: Request, res: Response): AdminActor {
  const token = res.locals.adminActor as Pick<AdminActor, 'actorType' | 'actorId' | 'actorName' | 'platformId'>;
  return {
    ...auditContext(req, { type: token.actorType, id: token.actorId, name: token.actorName }),
    actorType: token.actorType,
    platformId: token.platformId,
  };
}

/** Registers an operation on the router and in the OpenAPI registry, from the same schemas. */
export function addOperation<
  P extends Schema | undefined,
  Q extends Schema | undefined,
  B extends Schema | undefined,
  R extends Schema | undefined,
>(router: Router, registry: OpenAPIRegistry, op: AdminOperation<P, Q, B, R>) {
  const responses: RouteConfig['responses'] = {};
  responses[op.status] = op.response
    ? { description: op.responseDescription, content: { 'application/json': { schema: op.response } } }
    : { description: op.responseDescription };
  for (const status of [
    400,
    401,
    ...(op.errors ?? []),
    ...(op.body || op.upload ? [415] : []),
    ...(op.upload ? [413] : []),
    429,
  ]) {
    responses[status] = { description: ERROR_TEXT[status], content: { 'application/json': { schema: ErrorResponse } } };
  }
  registry.registerPath({
    method: op.method,
    path: op.path.replace(/:([A-Za-z_]+)/g, '{$1}'),
    operationId: op.operationId,
    summary: op.summary,
    description: op.description,
    tags: [op.tag],
    security: [{ adminToken: [] }],
    request: {
      params: op.params as z.ZodObject | undefined as never,
      query: op.query as z.ZodObject | undefined as never,
      body: op.body
        ? { required: !op.bodyOptional, content: { 'application/json': { schema: op.body } } }
        : op.upload
          ? {
              required: true,
              description: op.upload.description,
              content: Object.fromEntries(
                op.upload.contentTypes.map((type) => [type, { schema: { type: 'string', contentMediaType: type } }]),
              ),
            }
          : undefined,
    },
    responses,
  });

  // The file's own limit (with room, so a slightly larger file gets the handler's message, not a bare 413).
  const readUpload = op.upload ? [express.raw({ type: () => true, limit: op.upload.maxBytes * 2 })] : [];
  router[op.method](op.path, ...readUpload, async (req, res) => {
    const params = op.params ? parseInput(op.params, req.params) : undefined;
    const query = op.query ? parseInput(op.query, req.query) : undefined;
    // req.is answers null for a request without a body, false for one of another type.
    if (op.body && !req.is('application/json') && !(op.bodyOptional && req.is('application/json') === null)) {
      throw new OAuthError('invalid_request', 'the body must be application/json', { status: 415 });
    }
    if (
      op.upload &&
      !op.upload.contentTypes.includes(
        String(req.get('content-type') ?? '')
          .split(';')[0]
          .trim()
          .toLowerCase(),
      )
    ) {
      throw new OAuthError(
        'invalid_request',
        `the body must be the file itself, as one of ${op.upload.contentTypes.join(', ')} (Content-Type)`,
        { status: 415 },
      );
    }
    const body = op.body ? parseInput(op.body, req.body ?? {}) : undefined;
    const upload = op.upload
      ? { contentType: String(req.get('content-type')), bytes: Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0) }
      : undefined;
    const result = await op.handler({ params, query, body, upload, actor: actorOf(req, res), req } as Parameters<
      typeof op.handler
    >[0]);
    res.status(op.status);
    if (op.status === 204) res.end();
    else res.json(result);
  });
}
