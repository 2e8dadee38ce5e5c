/** Node.js release lines (the nodejs/Release schedule): when each became LTS and when it ends. */
export const NODE_LTS: Record<number, { lts: string; eol: string }> = {
  20: { lts: '2023-10-24', eol: '2026-04-30' },
  22: { lts: '2024-10-29', eol: '2027-04-30' },
  24: { lts: '2025-10-28', eol: '2028-04-30' },
  26: { lts: '2026-10-28', eol: '2029-04-30' },
};

/** The LTS lines in support at `now`, oldest first. */
export const supportedLines = (now: number): number[] =>
  Object.entries(NODE_LTS)
    .filter(([, line]) => Date.parse(line.lts) <= now && now < Date.parse(line.eol))
    .map(([major]) => Number(major))
    .sort((a, b) => a - b);
