/**
 * An access token for a user of a test IdP, signed with the IdP's own current key (read from its IDP_DATA_DIR) in
 * the shape its provider issues (issuer, audience `lookout-backend`, `sub` the user's id, the stored roles), for
 * tests whose IdP runs the real face step, so its pages cannot sign an administrator in without a face.
 * The admin API checks these exactly as the provider's own (signature, issuer, audience, expiry, the stored user).
 */
import { importJWK, SignJWT } from 'jose';
import { KeyStore } from '../../server/idp/keys.js';
import type { TestIdp } from './idp.js';

export async function mintedUserToken(idp: TestIdp, username: string, ttlSeconds = 300): Promise<string> {
  const user = await idp.users.byUsername(username);
  if (!user) throw new Error(`no user ${username}`);
  const [key] = (await new KeyStore(idp.dataDir).load()).signing;
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({
    preferred_username: user.username,
    azp: 'lookout-app',
    realm_access: { roles: user.roles },
    groups: user.groups,
  })
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'at+jwt' })
    .setIssuer(idp.issuer)
    .setAudience('lookout-backend')
    .setSubject(user.id)
    .setIssuedAt(now)
    .setExpirationTime(now + ttlSeconds)
    .sign(await importJWK(key, key.alg));
}
