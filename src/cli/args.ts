/** Minimal `--flag value` parser: repeated flags collect into arrays; bare flags are true. */
export function parseFlags(argv: string[]): { positionals: string[]; flags: Map<string, (string | true)[]> } {
  const positionals: string[] = [];
  const flags = new Map<string, (string | true)[]>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(2, eq) : arg.slice(2);
    let value: string | true = true;
    if (eq > 0) value = arg.slice(eq + 1);
    else if (i + 1 < argv.length && !argv[i + 1].startsWith('--')) value = argv[++i];
    flags.set(name, [...(flags.get(name) ?? []), value]);
  }
  return { positionals, flags };
}
