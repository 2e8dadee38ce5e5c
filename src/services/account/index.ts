import type { Deps } from '../deps';
import type { MailOutbox } from '../mail-outbox.service';
import type { BackchannelLogout } from '../backchannel-logout.service';
import { createAccountMail } from './account-mail';
import { createAccountSecurity } from './account-security.service';
import { createEmailVerification } from './email-verification.service';
import { createPasswordReset } from './password-reset.service';
import { createProfile } from './profile.service';

/** Account lifecycle: mail, email verification, password reset, the account page. */
export function createAccountServices(deps: Deps, outbox: MailOutbox, backchannel: BackchannelLogout) {
  const mail = createAccountMail(outbox);
  return {
    mail,
    emailVerification: createEmailVerification(deps, mail),
    passwordReset: createPasswordReset(deps, mail, backchannel),
    security: createAccountSecurity(deps, mail, backchannel),
    profile: createProfile(deps),
  };
}

export type AccountServices = ReturnType<typeof createAccountServices>;
