import { isIP } from 'node:net';
import type { Config } from './config';

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * The settings that are fine on a laptop but risky anywhere else, each as one line for the
 * start-up log. Pure: main.ts logs them.
 */
export function riskySettings(config: Config): string[] {
  const warnings: string[] = [];
  const base = new URL(config.baseUrl);
  const isLocal = LOCAL_HOSTS.has(base.hostname);
  if (base.protocol === 'http:' && !isLocal) {
    warnings.push(
      `BASE_URL ${config.baseUrl} is plain http on a non-local host: cookies are not Secure and tokens cross the network in clear; serve it over https`,
    );
  }
  if (!config.isProduction && !isLocal) {
    warnings.push(
      `NODE_ENV=${config.nodeEnv} on ${base.host}: development mode (generated secrets, demo data, /dev/outbox); set NODE_ENV=production for real use`,
    );
  }
  if (config.isDemoSeedRequested && config.nodeEnv !== 'development') {
    warnings.push(
      `DEMO_SEED=true is ignored: NODE_ENV=${config.nodeEnv}, and the demo platform and client are created only in development`,
    );
  }
  if (!(config.rateLimitScale > 0)) warnings.push('RATE_LIMIT_SCALE=0: rate limiting is off');
  if (config.trustProxy === true) {
    warnings.push(
      'TRUST_PROXY=true trusts every X-Forwarded-For hop, so clients can choose their own source address; name the proxy hops or subnets instead',
    );
  }
  if (config.isProduction && config.allowPrivateNetworkTargets) {
    warnings.push(
      'ALLOW_PRIVATE_NETWORK_TARGETS=true: requests the provider makes itself (back-channel logout, upstream identity providers) may reach loopback, private and link-local addresses, cloud metadata included, wherever a client registration points them',
    );
  }
  // The JWKS is served with max-age=3600 (http/cacheable-json.ts): a key must be published longer than that before it signs.
  if (config.signingKeyPublicationSeconds < 3600) {
    warnings.push(
      `SIGNING_KEY_PUBLICATION_SECONDS=${config.signingKeyPublicationSeconds} is shorter than the JWKS's cache lifetime (3600 s): after a rotation, relying parties holding a cached key set cannot verify the new key's tokens until they fetch it again`,
    );
  }
  if (isIP(base.hostname.replace(/^\[|\]$/g, '')) !== 0) {
    warnings.push(
      `BASE_URL's host ${base.hostname} is an IP address: passkeys are unavailable (browsers refuse an IP as WebAuthn relying-party id); use a host name, e.g. localhost`,
    );
  }
  return warnings;
}
