import { describe, expect, it } from 'vitest';
import { usersUrl } from './admin-users';

describe('usersUrl', () => {
  it("is Keycloak's admin path of the issuer's realm", () => {
    expect(usersUrl('http://127.0.0.1:8081/realms/lookout')).toBe('http://127.0.0.1:8081/admin/realms/lookout/users');
    expect(usersUrl('https://idp.example/realms/site-1/')).toBe('https://idp.example/admin/realms/site-1/users');
  });

  it('refuses an issuer that is not a realm URL', () => {
    expect(() => usersUrl('https://accounts.example')).toThrow(/not a realm URL/);
  });
});
