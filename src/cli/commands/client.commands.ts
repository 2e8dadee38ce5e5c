import { invalidRequest } from '../../errors';
import type { ClientType } from '../../domain/client';
import type { CliCommand } from '../command-table';
import { many, one } from '../flags';

export const clientCommands: CliCommand[] = [
  {
    group: 'client', verb: 'create',
    usage: '--platform G --name NAME --type confidential|public --redirect-uri URI [--redirect-uri URI ...] --scopes "openid profile email phone address offline_access" [--post-logout-redirect-uri URI ...] [--resource-server]',
    flags: ['platform', 'name', 'type', 'redirect-uri', 'scopes', 'post-logout-redirect-uri', 'resource-server'],
    summary: 'Register a client; a confidential one gets its secret, shown once.',
    details: ['--resource-server: confidential only: may introspect other clients\' tokens'],
    async run(s, flags) {
      const resourceServer = flags.get('resource-server');
      if (resourceServer && (resourceServer.length > 1 || resourceServer[0] !== true)) throw invalidRequest('--resource-server takes no value');
      const { client, secret } = await s.platforms.createClient(one(flags, 'platform', true), {
        name: one(flags, 'name', true),
        type: one(flags, 'type', true) as ClientType,
        redirectUris: many(flags, 'redirect-uri'),
        postLogoutRedirectUris: many(flags, 'post-logout-redirect-uri'),
        scopes: one(flags, 'scopes', true),
        isResourceServer: Boolean(resourceServer),
      });
      return {
        client_id: client.id,
        client_secret: secret,
        platform_guid: client.platformId,
        name: client.name,
        type: client.type,
        redirect_uris: client.redirectUris,
        post_logout_redirect_uris: client.postLogoutRedirectUris,
        scopes: client.allowedScopes.join(' '),
        is_resource_server: client.isResourceServer,
      };
    },
  },
];
