/**
 * The identity provider's settings: parsing and refusals (never echoing a secret), their rows in docs/settings.md, and the
 * Helm chart's idp template setting each of them.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IDP_SETTINGS, IdpSettingsError, issuerFor, loadIdpSettings } from '../../server/idp/settings.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'lookout-idp-settings-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function problems(env: Record<string, string>): string[] {
  try {
    loadIdpSettings(env);
  } catch (err) {
    if (err instanceof IdpSettingsError) return err.problems;
    throw err;
  }
  return [];
}

describe('loadIdpSettings', () => {
  it("has defaults for a local start, and derives the issuer in Keycloak's shape", () => {
    const s = loadIdpSettings({});
    expect(s).toMatchObject({ realm: 'lookout', port: 8081, host: '127.0.0.1', issuer: undefined, backendUrl: 'http://127.0.0.1:8080' });
    expect(s.appRedirectUris).toEqual(['http://127.0.0.1:8080/auth/callback', 'http://localhost:8080/auth/callback']);
    expect(s.serviceClientSecret).toBeUndefined();
    expect(issuerFor(s, 8081)).toBe('http://127.0.0.1:8081/realms/lookout');
    expect(issuerFor(loadIdpSettings({ IDP_ISSUER: 'https://id.example.com/realms/site/', IDP_REALM: 'site' }), 1)).toBe(
      'https://id.example.com/realms/site',
    );
  });

  it('refuses bad values by their variable, without echoing secrets', () => {
    const found = problems({
      IDP_REALM: 'two words',
      IDP_PORT: '70000',
      IDP_APP_REDIRECT_URIS: 'https://app.example/cb#frag',
      IDP_SERVICE_CLIENT_SECRET: 'short-s3cret',
      IDP_ADMIN_USERNAME: 'admin',
    });
    const text = found.join('\n');
    for (const name of [
      'IDP_REALM',
      'IDP_PORT',
      'IDP_APP_REDIRECT_URIS',
      'IDP_SERVICE_CLIENT_SECRET',
      'IDP_ADMIN_USERNAME and IDP_ADMIN_PASSWORD',
    ])
      expect(text).toContain(name);
    expect(text).not.toContain('short-s3cret');
  });

  it('reads secrets from files, which win over the variables', async () => {
    await writeFile(path.join(dir, 'secret'), 'from-the-file-0123456789\n');
    await writeFile(path.join(dir, 'password'), 'admin-password-from-file\n');
    const s = loadIdpSettings({
      IDP_SERVICE_CLIENT_SECRET: 'from-the-variable-0123456789',
      IDP_SERVICE_CLIENT_SECRET_FILE: path.join(dir, 'secret'),
      IDP_ADMIN_USERNAME: 'admin',
      IDP_ADMIN_PASSWORD_FILE: path.join(dir, 'password'),
    });
    expect(s.serviceClientSecret).toBe('from-the-file-0123456789');
    expect(s.adminPassword).toBe('admin-password-from-file');
    expect(problems({ IDP_SERVICE_CLIENT_SECRET_FILE: path.join(dir, 'missing') })[0]).toMatch(
      /^IDP_SERVICE_CLIENT_SECRET_FILE: cannot read .* \(ENOENT\)$/,
    );
  });
});

describe('documentation and deployment', () => {
  const readme = readFileSync(path.join(ROOT, 'docs/settings.md'), 'utf8').split('\n');
  const template = readFileSync(path.join(ROOT, 'deploy/helm/lookout/templates/idp.yaml'), 'utf8');

  it.each(Object.values(IDP_SETTINGS).map((s) => [s.env, s]))('docs/settings.md lists %s with its default and meaning', (env, spec) => {
    const row = readme.find((line) => line.startsWith(`| \`${env}\` |`));
    expect(row, `docs/settings.md has no row for ${env}`).toBeDefined();
    const shown = spec.default === undefined ? '(unset)' : `\`${spec.default}\``;
    if (env.startsWith('IDP_')) expect(row).toBe(`| \`${env}\` | ${shown} | ${spec.doc} |`);
    else expect(row).toContain(shown);
  });

  // Secrets reach the pod as files only; the chart never sets the plain variables.
  const viaFile = new Set(['IDP_SERVICE_CLIENT_SECRET', 'IDP_ADMIN_PASSWORD']);
  it.each(Object.values(IDP_SETTINGS).map((s) => [s.env]))('the Helm chart can set %s', (env) => {
    if (viaFile.has(env)) expect(template).not.toContain(`- name: ${env}\n`);
    else expect(template).toContain(`- name: ${env}\n`);
  });
});
