// Minimal typing for the parts of autocannon's programmatic API the harness uses.
declare module 'autocannon' {
  function autocannon(
    opts: Record<string, unknown>,
    cb: (err: Error | null, result: any) => void,
  ): { stop: () => void };
  export = autocannon;
}
