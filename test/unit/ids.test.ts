import { isUuid } from '../../src/domain/ids';
import { newId } from '../../src/crypto/random';

const GOOD = '3f2b8c1e-9a4d-4e6f-8b7a-0c1d2e3f4a5b';

describe('isUuid', () => {
  it('accepts the ids we issue, in their one spelling', () => {
    expect(isUuid(GOOD)).toBe(true);
    expect(isUuid('00000000-0000-0000-0000-000000000000')).toBe(true);
    for (let i = 0; i < 100; i++) expect(isUuid(newId())).toBe(true);
  });

  it.each([
    ['36 dashes', '-'.repeat(36)],
    ['dashes in the wrong places', '3f2b8c1e9-a4d-4e6f-8b7a-0c1d2e3f4a5b'],
    ['no dashes', GOOD.replace(/-/g, '')],
    ['a non-hex character', `g${GOOD.slice(1)}`],
    ['upper case (not our spelling)', GOOD.toUpperCase()],
    ['braces', `{${GOOD}}`],
    ['a urn prefix', `urn:uuid:${GOOD}`],
    ['a leading space', ` ${GOOD}`],
    ['a trailing space', `${GOOD} `],
    ['a trailing newline', `${GOOD}\n`],
    ['a leading newline', `\n${GOOD}`],
    ['a NUL byte', `${GOOD}\0`],
    ['one character too long', `${GOOD}0`],
    ['one character short', GOOD.slice(1)],
    ['a full-width digit', `\uff13${GOOD.slice(1)}`],
    ['a Cyrillic a', GOOD.replace('a', '\u0430')],
    ['a non-breaking hyphen', GOOD.replace('-', '\u2011')],
    ['empty', ''],
  ])('refuses %s', (_label, value) => {
    expect(isUuid(value)).toBe(false);
  });

  it.each([undefined, null, 42, ['x'], { id: GOOD }])('refuses a non-string (%p)', (value) => {
    expect(isUuid(value)).toBe(false);
  });
});
