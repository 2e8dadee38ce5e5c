// An MCP server that trusts Latchkey: it publishes RFC 9728 protected-resource metadata naming
// the Latchkey platform as its authorization server, and accepts only RFC 9068 access tokens that
// Latchkey issued for it (signature from the platform's JWKS, `typ: at+jwt`, `iss`, `aud` = this
// server's URL). One tool, `whoami`, answers with the token's subject, client and scopes.
//
//   ISSUER=http://localhost:3000/platforms/<platform_guid> MCP_URL=http://localhost:4000/mcp \
//     npx tsx examples/mcp-server/server.ts
//
// Register the server as a resource of the platform first (its identifier is MCP_URL):
//   latchkey-admin resource create --platform <platform_guid> --uri http://localhost:4000/mcp --name "Example MCP server" --scopes "mcp:tools"
import express from 'express';
import { createRemoteJWKSet, customFetch, jwtVerify, type JWTPayload } from 'jose';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import {
  getOAuthProtectedResourceMetadataUrl,
  mcpAuthMetadataRouter,
} from '@modelcontextprotocol/sdk/server/auth/router.js';
import { InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { OAuthMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';

export interface McpServerOptions {
  /** The Latchkey platform's issuer: `BASE_URL/platforms/<platform_guid>`. */
  issuer: string;
  /** This server's MCP endpoint, which is also its resource indicator (the tokens' `aud`). */
  mcpUrl: string;
  /** The scopes a token must carry to call a tool. */
  requiredScopes?: string[];
  /** How the server reaches Latchkey (tests pass their own fetch; default the global one). */
  fetch?: typeof fetch;
}

/** The authorization server's metadata, read from the issuer (RFC 8414 §3). */
async function authorizationServerMetadata(issuer: string, fetchFn: typeof fetch): Promise<OAuthMetadata> {
  const url = new URL(issuer);
  const wellKnown = new URL(`/.well-known/oauth-authorization-server${url.pathname.replace(/\/$/, '')}`, url);
  const response = await fetchFn(wellKnown);
  if (!response.ok) throw new Error(`${wellKnown}: HTTP ${response.status}`);
  const metadata = (await response.json()) as OAuthMetadata;
  if (metadata.issuer !== issuer) throw new Error(`${wellKnown} names issuer ${metadata.issuer}, not ${issuer}`);
  return metadata;
}

/** Builds the server's Express app: metadata, the bearer check and the MCP endpoint. */
export async function createMcpApp(options: McpServerOptions): Promise<express.Express> {
  const fetchFn = options.fetch ?? fetch;
  const oauthMetadata = await authorizationServerMetadata(options.issuer, fetchFn);
  const jwks = createRemoteJWKSet(new URL(String(oauthMetadata.jwks_uri)), { [customFetch]: fetchFn });
  const mcpUrl = new URL(options.mcpUrl);

  const verifier = {
    async verifyAccessToken(token: string): Promise<AuthInfo> {
      let claims: JWTPayload;
      try {
        ({ payload: claims } = await jwtVerify(token, jwks, {
          issuer: options.issuer,
          audience: options.mcpUrl,
          typ: 'at+jwt',
        }));
      } catch (err) {
        throw new InvalidTokenError(`the access token was refused: ${(err as Error).message}`);
      }
      return {
        token,
        clientId: String(claims.client_id),
        scopes: typeof claims.scope === 'string' ? claims.scope.split(' ').filter(Boolean) : [],
        expiresAt: claims.exp,
        resource: mcpUrl,
        extra: { sub: claims.sub },
      };
    },
  };

  const app = express();
  app.use(express.json());
  app.use(
    mcpAuthMetadataRouter({
      oauthMetadata,
      resourceServerUrl: mcpUrl,
      scopesSupported: options.requiredScopes,
      resourceName: 'Example MCP server',
    }),
  );
  const bearer = requireBearerAuth({
    verifier,
    requiredScopes: options.requiredScopes,
    resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpUrl),
    expectedResource: mcpUrl,
  });

  // Stateless Streamable HTTP: a server and a transport per request.
  app.post(mcpUrl.pathname, bearer, async (req, res) => {
    const server = new McpServer({ name: 'latchkey-example', version: '1.0.0' });
    server.registerTool('whoami', { description: 'Who the access token speaks for' }, async () => ({
      content: [
        {
          type: 'text',
          text: JSON.stringify({ sub: req.auth?.extra?.sub, client_id: req.auth?.clientId, scopes: req.auth?.scopes }),
        },
      ],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  return app;
}

if (require.main === module) {
  const issuer = process.env.ISSUER;
  const mcpUrl = process.env.MCP_URL ?? 'http://localhost:4000/mcp';
  if (!issuer) {
    console.error('Set ISSUER to the platform issuer, e.g. http://localhost:3000/platforms/<platform_guid>');
    process.exit(1);
  }
  void createMcpApp({ issuer, mcpUrl, requiredScopes: process.env.MCP_SCOPES?.split(' ').filter(Boolean) }).then(
    (app) => {
      const port = Number(new URL(mcpUrl).port || 80);
      app.listen(port, () => console.log(`MCP server on ${mcpUrl}, trusting ${issuer}`));
    },
  );
}
