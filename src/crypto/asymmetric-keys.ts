import { exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';
import { PUBLIC_JWK_MEMBERS, type AsymmetricAlg } from '../domain/signing-key';

/** Only the public members of a JWK (PUBLIC_JWK_MEMBERS of its kty): what may ever be stored in clear or published. */
function publicMembers(jwk: JWK): Record<string, string> {
  const allowed = PUBLIC_JWK_MEMBERS[String(jwk.kty)];
  if (!allowed) throw new Error(`no public members known for kty ${String(jwk.kty)}`);
  return Object.fromEntries(allowed.map((m) => [m, String((jwk as Record<string, unknown>)[m])]));
}

/** A fresh key pair for a standard platform (RS256 2048-bit, ES256 P-256, EdDSA Ed25519), as JWKs. */
export async function newAsymmetricKeyPair(
  alg: AsymmetricAlg,
): Promise<{ privateJwk: JWK; publicJwk: Record<string, string> }> {
  const options =
    alg === 'RS256'
      ? { modulusLength: 2048, extractable: true }
      : alg === 'EdDSA'
        ? { crv: 'Ed25519', extractable: true }
        : { extractable: true };
  const { privateKey, publicKey } = await generateKeyPair(alg, options);
  return { privateJwk: await exportJWK(privateKey), publicJwk: publicMembers(await exportJWK(publicKey)) };
}

/** The private key of a stored (unsealed) private JWK, for signing. */
export async function importPrivateJwk(jwk: JWK, alg: AsymmetricAlg): Promise<CryptoKey> {
  return (await importJWK(jwk, alg)) as CryptoKey;
}

/** The public key of a published JWK, for verifying. */
export async function importPublicJwk(jwk: Record<string, string>, alg: AsymmetricAlg): Promise<CryptoKey> {
  return (await importJWK(jwk, alg)) as CryptoKey;
}
