/**
 * deploy/keycloak/lookout-realm.json, the realm export for sites that keep Keycloak and its biometric extension:
 * the spec's clients, flows, required action, roles and group are there, and consistent with each other and with
 * what Lookout's API and IdP expect (client names, audience, role and group names).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { clientNames, ROLE_VERIFIER } from '../../server/idp/clients.js';
import { ACTION_BIOMETRIC_ENROLLMENT, GROUP_ENROLLED, ROLE_ADMIN, ROLE_USER } from '../../server/idp/users.js';
import { REPO_ROOT } from '../helpers/test-server.js';

interface Execution {
  authenticator?: string;
  flowAlias?: string;
  authenticatorFlow: boolean;
  authenticatorConfig?: string;
  requirement: string;
  priority: number;
}
interface Flow {
  alias: string;
  topLevel: boolean;
  providerId: string;
  authenticationExecutions: Execution[];
}
interface Mapper {
  protocolMapper: string;
  config: Record<string, string>;
}
interface Client {
  clientId: string;
  publicClient: boolean;
  bearerOnly: boolean;
  standardFlowEnabled: boolean;
  implicitFlowEnabled: boolean;
  directAccessGrantsEnabled: boolean;
  serviceAccountsEnabled: boolean;
  redirectUris: string[];
  attributes?: Record<string, string>;
  protocolMappers?: Mapper[];
  secret?: string;
}

const realm = JSON.parse(readFileSync(path.join(REPO_ROOT, 'deploy/keycloak/lookout-realm.json'), 'utf8')) as {
  realm: string;
  registrationAllowed: boolean;
  roles: { realm: { name: string; composites?: { realm?: string[] } }[] };
  defaultRole: { name: string };
  groups: { name: string; path: string }[];
  clients: Client[];
  users: { username: string; serviceAccountClientId?: string; realmRoles: string[] }[];
  browserFlow: string;
  registrationFlow: string;
  authenticationFlows: Flow[];
  authenticatorConfig: { alias: string; config: Record<string, string> }[];
  requiredActions: { alias: string; providerId: string; enabled: boolean; defaultAction: boolean }[];
};

const names = clientNames(realm.realm);
const client = (id: string) => {
  const c = realm.clients.find((x) => x.clientId === id);
  expect(c, id).toBeDefined();
  return c!;
};
const flow = (alias: string) => {
  const f = realm.authenticationFlows.find((x) => x.alias === alias);
  expect(f, alias).toBeDefined();
  return f!;
};
const roleNames = new Set(realm.roles.realm.map((r) => r.name));
const audienceOf = (c: Client) =>
  c.protocolMappers?.filter((m) => m.protocolMapper === 'oidc-audience-mapper').map((m) => m.config['included.client.audience']);

describe('the Keycloak realm export', () => {
  it("is the spec's realm `lookout` with its roles and group, self-registration off", () => {
    expect(realm.realm).toBe('lookout');
    expect(realm.registrationAllowed).toBe(false);
    expect(roleNames).toEqual(new Set([ROLE_USER, ROLE_ADMIN, ROLE_VERIFIER, realm.defaultRole.name]));
    // An administrator may do all a user may; every user of the realm is a biometric-user.
    expect(realm.roles.realm.find((r) => r.name === ROLE_ADMIN)?.composites?.realm).toEqual([ROLE_USER]);
    expect(realm.roles.realm.find((r) => r.name === realm.defaultRole.name)?.composites?.realm).toContain(ROLE_USER);
    for (const r of realm.roles.realm)
      for (const c of r.composites?.realm ?? []) expect(roleNames.has(c) || c === 'offline_access', `${r.name} -> ${c}`).toBe(true);
    expect(realm.groups).toEqual([expect.objectContaining({ name: GROUP_ENROLLED, path: `/${GROUP_ENROLLED}` })]);
  });

  it('has the three clients: the app public with PKCE S256 only, the backend bearer-only, the service confidential', () => {
    expect(realm.clients.map((c) => c.clientId).sort()).toEqual([names.app, names.backend, names.service].sort());
    const app = client(names.app);
    expect(app).toMatchObject({
      publicClient: true,
      standardFlowEnabled: true,
      implicitFlowEnabled: false,
      directAccessGrantsEnabled: false,
    });
    expect(app.attributes?.['pkce.code.challenge.method']).toBe('S256');
    expect(app.redirectUris.every((u) => u.endsWith('/auth/callback'))).toBe(true);
    const backend = client(names.backend);
    expect(backend).toMatchObject({
      bearerOnly: true,
      standardFlowEnabled: false,
      directAccessGrantsEnabled: false,
      serviceAccountsEnabled: false,
    });
    expect(backend.redirectUris).toEqual([]);
    const service = client(names.service);
    expect(service).toMatchObject({
      publicClient: false,
      serviceAccountsEnabled: true,
      standardFlowEnabled: false,
      directAccessGrantsEnabled: false,
    });
    // The secret comes from the environment at import, never from the repository.
    expect(service.secret).toMatch(/^\$\{[A-Z_]+\}$/);
  });

  it('puts the backend in the audience of the app and service tokens, with realm roles and groups as the API reads them', () => {
    for (const id of [names.app, names.service]) {
      expect(audienceOf(client(id)), id).toEqual([names.backend]);
      const roles = client(id).protocolMappers?.find((m) => m.protocolMapper === 'oidc-usermodel-realm-role-mapper');
      expect(roles?.config['claim.name'], id).toBe('realm_access.roles');
    }
    const groups = client(names.app).protocolMappers?.find((m) => m.protocolMapper === 'oidc-group-membership-mapper');
    expect(groups?.config).toMatchObject({ 'claim.name': 'groups', 'full.path': 'false' });
  });

  it("gives the service client's service account biometric-admin and biometric-verifier, and its tokens their client_id", () => {
    const account = realm.users.find((u) => u.serviceAccountClientId === names.service);
    expect(account?.username).toBe(`service-account-${names.service}`);
    expect(account?.realmRoles).toContain(ROLE_ADMIN);
    // #35: the face step verifies anyone (with the distance); the API tells a client-credentials token by `client_id`.
    expect(account?.realmRoles).toContain(ROLE_VERIFIER);
    const clientId = client(names.service).protocolMappers?.find((m) => m.protocolMapper === 'oidc-usersessionmodel-note-mapper');
    expect(clientId?.config).toMatchObject({ 'user.session.note': 'client_id', 'claim.name': 'client_id', 'access.token.claim': 'true' });
    for (const u of realm.users) for (const r of u.realmRoles) expect(roleNames.has(r), r).toBe(true);
  });

  it('signs in through `biometric browser`: the session cookie, or the password and then the face, never the password alone', () => {
    expect(realm.browserFlow).toBe('biometric browser');
    const top = flow(realm.browserFlow);
    expect(top.topLevel).toBe(true);
    const [cookie, forms] = [...top.authenticationExecutions].sort((a, b) => a.priority - b.priority);
    expect(cookie).toMatchObject({ authenticator: 'auth-cookie', requirement: 'ALTERNATIVE' });
    expect(forms).toMatchObject({ authenticatorFlow: true, requirement: 'ALTERNATIVE' });
    const steps = [...flow(forms.flowAlias!).authenticationExecutions].sort((a, b) => a.priority - b.priority);
    expect(steps.map((s) => [s.authenticator, s.requirement])).toEqual([
      ['auth-username-password-form', 'REQUIRED'],
      ['biometric-authenticator', 'REQUIRED'],
    ]);
    const config = realm.authenticatorConfig.find((c) => c.alias === steps[1].authenticatorConfig);
    expect(Number(config?.config['biometric.confidenceThreshold'])).toBe(65);
  });

  it('has the registration flow, and every flow and config it names exists', () => {
    expect(flow(realm.registrationFlow).topLevel).toBe(true);
    const aliases = new Set(realm.authenticationFlows.map((f) => f.alias));
    const configs = new Set(realm.authenticatorConfig.map((c) => c.alias));
    for (const f of realm.authenticationFlows)
      for (const e of f.authenticationExecutions) {
        if (e.authenticatorFlow) expect(aliases.has(e.flowAlias!), `${f.alias} -> ${e.flowAlias}`).toBe(true);
        if (e.authenticatorConfig) expect(configs.has(e.authenticatorConfig), e.authenticatorConfig).toBe(true);
      }
  });

  it('has the required action biometric-enrollment, on for every new user, after the password change', () => {
    const enrol = realm.requiredActions.find((a) => a.alias === ACTION_BIOMETRIC_ENROLLMENT);
    expect(enrol).toMatchObject({ providerId: ACTION_BIOMETRIC_ENROLLMENT, enabled: true, defaultAction: true });
    expect(realm.requiredActions.map((a) => a.alias)).toEqual(['UPDATE_PASSWORD', ACTION_BIOMETRIC_ENROLLMENT]);
  });
});
