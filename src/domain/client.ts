export type ClientType = 'confidential' | 'public';

/** A registered application of a platform (DESIGN §5). The secret is sealed (never in clear). */
export interface Client {
  id: string;
  platformId: string;
  name: string;
  type: ClientType;
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  allowedScopes: string[];
  sealedSecret: string | null;
  /** May introspect tokens issued to the platform's other clients (RFC 7662 §4). */
  isResourceServer: boolean;
  createdAt: Date;
}
