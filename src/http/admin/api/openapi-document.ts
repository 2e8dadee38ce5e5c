import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';

export function createAdminRegistry(): OpenAPIRegistry {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'adminToken', {
    type: 'http',
    scheme: 'bearer',
    description: 'An admin token (`lk_admin_…`) from `admin token create`: global, or limited to one platform',
  });
  return registry;
}

/** The OpenAPI 3.1 document of everything registered (generated once, on the first request for it). */
export function generateAdminDocument(registry: OpenAPIRegistry, baseUrl: string) {
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Latchkey admin API',
      version: '1',
      description:
        'Platforms, clients, users, upstream identity providers, signing keys, rate limits, sign-in throttles, the mail outbox and the audit log. ' +
        'JSON in and out; errors as `{error, error_description}`; lists are cursor-paged (`limit`, `cursor` → `next_cursor`). ' +
        'Every change is recorded in the audit log with the token as actor.',
    },
    servers: [{ url: `${baseUrl}/admin/api/v1` }],
    security: [{ adminToken: [] }],
  });
}
