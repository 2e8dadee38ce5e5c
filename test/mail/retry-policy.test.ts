import { describeFailure, retryDelaySeconds, DEFAULT_DELIVERY } from '../../src/services/mail-outbox.service';

describe('outbox retry policy', () => {
  it('doubles from 30 s up to 1 h, with half of each delay random (equal jitter)', () => {
    const at = (attempt: number, r: number) => retryDelaySeconds(attempt, DEFAULT_DELIVERY, () => r);
    expect([1, 2, 3, 4].map((n) => at(n, 1))).toEqual([30, 60, 120, 240]);
    expect([1, 2, 3, 4].map((n) => at(n, 0))).toEqual([15, 30, 60, 120]);
    expect(at(8, 1)).toBe(3600);
    expect(at(30, 1)).toBe(3600);
    expect(at(30, 0)).toBe(1800);
  });

  it('describes a failure by code, command and message, never with the credentials of a URL', () => {
    const err = Object.assign(
      new Error('Invalid login via smtps://mailer:hunter2@smtp.example.com:465: 535 5.7.8 Authentication failed'),
      { code: 'EAUTH', command: 'AUTH PLAIN' },
    );
    const text = describeFailure(err);
    expect(text).toMatch(/^EAUTH \(AUTH PLAIN\) Invalid login via smtps:\/\/\*\*\*@smtp\.example\.com:465: 535/);
    expect(text).not.toContain('hunter2');
    expect(describeFailure(new Error('x'.repeat(2000)))).toHaveLength(500);
  });
});
