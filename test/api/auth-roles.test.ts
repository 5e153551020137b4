/**
 * The role table (shared/api/roles.ts) beside the route table: every endpoint has its access, the operations the
 * spec names need the role it names, and the OpenAPI document states the bearer scheme and the 401/403/503 answers
 * of every protected operation (and none on the open ones).
 */
import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../server/http/openapi.js';
import { ENDPOINTS } from '../../shared/api/endpoints.js';
import { errorStatusesOf } from '../../shared/api/route.js';
import { apiRoutes } from '../../shared/api/routes.js';
import { roleAllows, ROLES, ROUTE_ACCESS } from '../../shared/api/roles.js';

const ACCESS = ['public', ...ROLES];

describe('the role table', () => {
  it('gives every endpoint of the route table an access, and names no other', () => {
    expect(Object.keys(ROUTE_ACCESS).sort()).toEqual(Object.keys(ENDPOINTS).sort());
    for (const [name, route] of Object.entries(apiRoutes)) {
      expect(ACCESS, name).toContain(route.access);
      expect(route.access, name).toBe(ROUTE_ACCESS[name as keyof typeof ROUTE_ACCESS]);
    }
  });

  it('keeps the probes, the docs and the sign-in configuration open, and nothing else', () => {
    const open = Object.entries(ROUTE_ACCESS)
      .filter(([, access]) => access === 'public')
      .map(([name]) => name)
      .sort();
    expect(open).toEqual(['authConfig', 'docs', 'docsAsset', 'health', 'openapi', 'ready']);
  });

  it('asks biometric-user for recognition, objects, PPE, chat and reads; biometric-admin for changes', () => {
    for (const name of [
      'recognize',
      'verify',
      'detectObjects',
      'ppeDetect',
      'chat',
      'analyze',
      'labels',
      'results',
      'modelsConfig',
      'trainStatus',
    ] as const)
      expect(ROUTE_ACCESS[name], name).toBe('biometric-user');
    for (const name of ['uploadImage', 'deleteLabel', 'deleteImage', 'train', 'setModelsConfig', 'setDetection'] as const)
      expect(ROUTE_ACCESS[name], name).toBe('biometric-admin');
    // Whatever changes stored data or the configuration is an administrator's; recognising and sending results is not.
    for (const [name, route] of Object.entries(apiRoutes)) {
      if (route.access === 'public') continue;
      if (
        route.method !== 'get' &&
        !['recognize', 'analyze', 'verify', 'detectObjects', 'ppeDetect', 'chat', 'storeResults'].includes(name)
      )
        expect(route.access, name).toBe('biometric-admin');
    }
  });

  it("asks biometric-device (kiosks, devices) for the trained models: they hold everyone's templates", () => {
    for (const name of ['trainedModels', 'trainedLbph', 'trainedEmbedding', 'trainedCorrections'] as const)
      expect(ROUTE_ACCESS[name], name).toBe('biometric-device');
    expect(roleAllows('biometric-device', ['biometric-user'])).toBe(false);
    expect(roleAllows('biometric-device', ['biometric-device'])).toBe(true);
    expect(roleAllows('biometric-device', ['biometric-admin'])).toBe(true);
    // A kiosk does what a user does, but no administration.
    expect(roleAllows('biometric-user', ['biometric-device'])).toBe(true);
    expect(roleAllows('biometric-admin', ['biometric-device'])).toBe(false);
    expect(ROUTE_ACCESS.auditLog).toBe('biometric-admin');
  });

  it('lets an administrator do what a user may, and nobody without a role', () => {
    expect(roleAllows('biometric-user', ['biometric-admin'])).toBe(true);
    expect(roleAllows('biometric-admin', ['biometric-user'])).toBe(false);
    expect(roleAllows('biometric-user', ['offline_access', 'uma_authorization'])).toBe(false);
    expect(roleAllows('public', [])).toBe(true);
  });
});

describe('the OpenAPI document under auth', () => {
  const doc = openApiDocument('0.0.0-test') as any;

  it('declares the bearer scheme and puts it on every protected operation only', () => {
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
    for (const [name, route] of Object.entries(apiRoutes)) {
      const op = doc.paths[`/api${route.path}`][route.method];
      const statuses = Object.keys(op.responses);
      if (route.access === 'public') {
        expect(op.security, name).toBeUndefined();
        expect(statuses, name).not.toContain('401');
      } else {
        expect(op.security, name).toEqual([{ bearer: [] }]);
        expect(statuses, name).toEqual(expect.arrayContaining(['401', '403', '503']));
        expect(Object.keys(op.responses['401'].content['application/json'].examples).sort(), name).toEqual([
          'invalid_token',
          'missing_token',
        ]);
        expect(op.description, name).toContain(`the role \`${route.access}\``);
        expect(errorStatusesOf(route).get(403), name).toContain('insufficient_role');
      }
    }
    expect(doc.paths['/metrics'].get.security).toBeUndefined();
  });
});
