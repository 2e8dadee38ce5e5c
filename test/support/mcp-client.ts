import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';

/**
 * The MCP SDK's OAuth client side as an agent keeps it, in memory: what it registered (dynamic
 * registration) or the URL of its metadata document, its tokens and PKCE verifier. It does not
 * open a browser: `authorizationUrl` holds where the SDK sent the user, for the test to follow.
 */
export class InMemoryOAuthClient implements OAuthClientProvider {
  authorizationUrl?: URL;
  registered?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  private verifier?: string;

  constructor(
    private readonly options: {
      redirectUrl: string;
      clientName: string;
      /** Set: the client is identified by this https URL (a client ID metadata document), never registers. */
      clientMetadataUrl?: string;
      scope?: string;
    },
  ) {}

  get redirectUrl(): string {
    return this.options.redirectUrl;
  }

  get clientMetadataUrl(): string | undefined {
    return this.options.clientMetadataUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.options.clientName,
      redirect_uris: [this.options.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...(this.options.scope ? { scope: this.options.scope } : {}),
    };
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.registered;
  }

  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.registered = info;
  }

  tokens(): OAuthTokens | undefined {
    return this.saved;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.saved = tokens;
  }

  redirectToAuthorization(url: URL): void {
    this.authorizationUrl = url;
  }

  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }

  codeVerifier(): string {
    if (!this.verifier) throw new Error('no PKCE verifier saved: the SDK did not start an authorization');
    return this.verifier;
  }
}
