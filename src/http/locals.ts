import type { Platform } from '../repositories/platform.repository';
import type { ClientRow } from '../repositories/client.repository';

declare global {
  namespace Express {
    interface Locals {
      platform: Platform;
      client?: ClientRow;
    }
  }
}
