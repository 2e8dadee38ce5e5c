import type { Platform } from '../domain/platform';
import type { Client } from '../domain/client';

declare global {
  namespace Express {
    interface Locals {
      platform: Platform;
      client?: Client;
    }
  }
}
