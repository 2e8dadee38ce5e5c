import { newId, newTimeOrderedId } from '../../src/crypto/random';
import { isUuid } from '../../src/domain/ids';

// Grant rows take time-ordered ids so that their index inserts append (docs/decisions.md,
// "Time-ordered ids for grants"); they must still be ordinary identifiers everywhere else.
describe('newTimeOrderedId', () => {
  it('is a canonical UUID of version 7, as every identifier check takes it', () => {
    const id = newTimeOrderedId();
    expect(isUuid(id)).toBe(true);
    expect(id[14]).toBe('7'); // the version nibble
    expect(['8', '9', 'a', 'b']).toContain(id[19]); // the RFC 9562 variant
  });

  it('sorts in the order the ids were made, as Postgres compares uuids (byte by byte), unlike random ones', async () => {
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      made.push(newTimeOrderedId());
      await new Promise((ok) => setTimeout(ok, 2));
    }
    expect([...made].sort()).toEqual(made);
    const now = Date.now();
    const stamp = parseInt(made[4].replace(/-/g, '').slice(0, 12), 16); // the first 48 bits: ms since 1970
    expect(Math.abs(now - stamp)).toBeLessThan(60_000);
    expect(newId()[14]).toBe('4');
  });
});
