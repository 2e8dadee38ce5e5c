/** A tenant: its own users, clients and signing keys (DESIGN §4). */
export interface Platform {
  id: string;
  name: string;
  rateLimitOverrides: Record<string, number>;
  createdAt: Date;
}
