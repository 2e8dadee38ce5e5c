import { renderAvatarSvg, initialsOf } from '../../src/presenters/avatar.presenter';

function fillOf(svg: string): string {
  const m = /<rect[^>]*fill="([^"]+)"/.exec(svg);
  if (!m) throw new Error('no fill in ' + svg);
  return m[1] as string;
}

function textOf(svg: string): string {
  const m = /<text[^>]*>([^<]*)<\/text>/.exec(svg);
  if (!m) throw new Error('no text in ' + svg);
  return m[1] as string;
}

describe('renderAvatarSvg', () => {
  it('returns a 128x128 SVG document', () => {
    const svg = renderAvatarSvg({ seed: 'user-1', initials: 'AL' });
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg).toContain('xmlns="http://www.w3.org/2000/svg"');
    expect(svg).toContain('width="128"');
    expect(svg).toContain('height="128"');
    expect(svg).toContain('viewBox="0 0 128 128"');
    expect(svg.endsWith('</svg>')).toBe(true);
  });

  it('uses the same colour for the same seed', () => {
    const a = renderAvatarSvg({ seed: 'same-seed', initials: 'AB' });
    const b = renderAvatarSvg({ seed: 'same-seed', initials: 'CD' });
    expect(fillOf(a)).toBe(fillOf(b));
    expect(renderAvatarSvg({ seed: 'same-seed', initials: 'AB' })).toBe(a);
  });

  it('spreads different seeds over different colours', () => {
    const fills = new Set(
      Array.from({ length: 20 }, (_, i) => fillOf(renderAvatarSvg({ seed: `seed-${i}`, initials: 'X' }))),
    );
    expect(fills.size).toBeGreaterThan(5);
  });

  it('draws the initials in white', () => {
    const svg = renderAvatarSvg({ seed: 's', initials: 'al' });
    expect(svg).toMatch(/<text[^>]*fill="#ffffff"/);
    expect(textOf(svg)).toBe('AL');
  });

  it('escapes XML special characters', () => {
    const svg = renderAvatarSvg({ seed: 's', initials: '<&' });
    expect(textOf(svg)).toBe('&lt;&amp;');
    expect(svg).not.toContain('<&');
    const quotes = renderAvatarSvg({ seed: 's', initials: `"'` });
    expect(textOf(quotes)).toBe('&quot;&apos;');
  });

  it('keeps at most two characters and falls back to "?"', () => {
    expect(textOf(renderAvatarSvg({ seed: 's', initials: 'abc' }))).toBe('AB');
    expect(textOf(renderAvatarSvg({ seed: 's', initials: '' }))).toBe('?');
    expect(textOf(renderAvatarSvg({ seed: 's', initials: '   ' }))).toBe('?');
  });
});

describe('initialsOf', () => {
  it('takes the first letter of given and family name', () => {
    expect(initialsOf('Ada', 'Lovelace', 'ada@example.com')).toBe('AL');
    expect(initialsOf('ada', 'lovelace')).toBe('AL');
  });

  it('uses whichever name is present', () => {
    expect(initialsOf('Ada', null, 'x@example.com')).toBe('A');
    expect(initialsOf(null, 'Lovelace', 'x@example.com')).toBe('L');
    expect(initialsOf('  ', 'Lovelace')).toBe('L');
  });

  it('falls back to the email local part', () => {
    expect(initialsOf(null, null, 'zoe@example.com')).toBe('Z');
    expect(initialsOf(undefined, undefined, 'bob.smith@example.com')).toBe('B');
    expect(initialsOf('', '', '_jo@example.com')).toBe('J');
  });

  it('returns "?" when nothing is usable', () => {
    expect(initialsOf()).toBe('?');
    expect(initialsOf(null, null, '')).toBe('?');
  });

  it('handles non-ASCII letters', () => {
    expect(initialsOf('élodie', 'Ørsted')).toBe('ÉØ');
  });
});
