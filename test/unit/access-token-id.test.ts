import { formatAccessTokenJti, parseAccessTokenJti, type TokenAnchor } from '../../src/domain/access-token-id';

const ID = '0b8f5a4e-3c1d-4e2f-9a7b-6c5d4e3f2a1b';
const legacy = () => 'digest-of-the-jti';

describe('access-token ids (jti)', () => {
  it.each<[TokenAnchor, boolean, RegExp]>([
    [{ kind: 'family', id: ID }, false, /^g0b8f5a4e-.*\.R$/],
    [{ kind: 'code', id: ID }, false, /^a0b8f5a4e-.*\.R$/],
    [{ kind: 'device', id: ID }, false, /^d0b8f5a4e-.*\.R$/],
    [{ kind: 'client', id: ID }, true, /^xc0b8f5a4e-.*\.R$/],
    [{ kind: 'legacy', id: 'AbC_-9' }, true, /^xlAbC_-9\.R$/],
  ])('names its grant (%j, exchanged %s) and reads back the same', (anchor, exchanged, shape) => {
    const jti = formatAccessTokenJti({ anchor, exchanged }, 'R');
    expect(jti).toMatch(shape);
    expect(parseAccessTokenJti(jti, legacy)).toEqual({ anchor, exchanged });
  });

  it("reads a jti without a dot as an earlier version's, whose record is keyed by its digest", () => {
    expect(parseAccessTokenJti('Zm9vYmFyYmF6cXV4cXV1eA', legacy)).toEqual({
      anchor: { kind: 'legacy', id: 'digest-of-the-jti' },
      exchanged: false,
    });
  });

  it.each(['.R', 'g.R', 'gnot-a-uuid.R', `q${ID}.R`, `x.R`, `xx${ID}.R`, `l.R`, 'l$%.R', `g${ID.toUpperCase()}.R`])(
    'names nothing for %s',
    (jti) => expect(parseAccessTokenJti(jti, legacy)).toBeUndefined(),
  );
});
