import { withFieldLabels } from '../../src/http/admin/console/field-labels';

describe('console errors name fields by their labels', () => {
  it("replaces each leading API field name with the form's label", () => {
    expect(withFieldLabels('accent_color: has a contrast of 1.07:1 against white', 'branding')).toBe(
      'Accent colour: has a contrast of 1.07:1 against white',
    );
    expect(
      withFieldLabels('name: must not be empty; redirect_uris: at least one redirect URI is required', 'clients'),
    ).toBe('Name: must not be empty; Redirect URIs: at least one redirect URI is required');
  });

  it("says which line of a list, and uses a screen's own label where it differs", () => {
    expect(withFieldLabels('redirect_uris.1: must not contain a fragment', 'client')).toBe(
      'Redirect URIs (line 2): must not contain a fragment',
    );
    expect(withFieldLabels('email: too long', 'users')).toBe('Email contains: too long');
    expect(withFieldLabels('signing_profile: Invalid option', 'keys')).toBe('Profile: Invalid option');
    expect(withFieldLabels('signing_profile: Invalid option', 'platforms')).toBe('Signing profile: Invalid option');
  });

  it('leaves a message without a known field name as it is', () => {
    for (const message of [
      'This form has expired.',
      'unknown client "x"',
      'scopes must include openid',
      'the active key cannot be retired: rotate first',
    ]) {
      expect(withFieldLabels(message, 'clients')).toBe(message);
    }
  });
});
