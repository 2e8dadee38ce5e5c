import { scopeClaims } from '../domain/claims';

/** UserInfo: sub, human_guid and the claims of every granted scope, merged (scope rule 2). */
export const presentUserinfo = scopeClaims;
