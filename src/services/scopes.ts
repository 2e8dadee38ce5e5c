/** Moved to src/domain/scopes.ts (pure rules); kept so service imports stay short. */
export * from '../domain/scopes';
