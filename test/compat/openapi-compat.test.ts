/**
 * The OpenAPI document shows the fields kept for the original service's clients, marked as such: a description
 * starting "Compatibility (original v1.2.0):" and `x-compat: true`, beside Lookout's own (unmarked) fields.
 */
import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../server/http/openapi.js';
import { COMPAT_PREFIX } from '../../shared/api/common.js';

const doc = openApiDocument('0.0.0-test') as { components: { schemas: Record<string, any> }; info: { description: string } };

/** Component -> the fields it carries for the original's clients (issue #19). */
const COMPAT_FIELDS: Record<string, string[]> = {
  HealthResponse: ['app'],
  ReadyResponse: [
    'model_loaded',
    'ai_model',
    'object_detection',
    'ovms_enabled',
    'ovms_status',
    'chat_enabled',
    'ppe_enabled',
    'ppe_serving',
    'chat_backend',
  ],
  PpeObject: ['bbox'],
  PpeStatusResponse: ['expected_ppe'],
  ModelsConfigResponse: ['ai_model', 'is_trained', 'model_info', 'ovms_info', 'chat_enabled'],
  ModelsConfigUpdateResponse: ['ai_model', 'is_trained', 'model_info', 'ovms_info', 'chat_enabled'],
  DetectionResponse: ['ovms_info'],
  ModelsAvailableResponse: ['models'],
  ObjectStatusResponse: ['type', 'classes_count'],
  ObjectClassesResponse: ['detector'],
  LabelImagesResponse: ['images'],
  RecognizedFace: ['detection_method'],
  AnalyzeResponse: ['cascades_loaded'],
  ImageUploadResponse: ['path'],
  ChatStatusResponse: ['model_endpoint', 'model_name'],
  Error: ['detail'],
};

describe('compatibility fields in the OpenAPI document', () => {
  for (const [component, fields] of Object.entries(COMPAT_FIELDS)) {
    it(`${component}: ${fields.join(', ')} are marked`, () => {
      const schema = doc.components.schemas[component];
      expect(schema, component).toBeDefined();
      for (const field of fields) {
        const property = schema.properties[field];
        expect(property, `${component}.${field}`).toBeDefined();
        expect(property.description, `${component}.${field}`).toMatch(new RegExp(`^${COMPAT_PREFIX.replace(/[()]/g, '\\$&')} `));
        expect(property['x-compat'], `${component}.${field}`).toBe(true);
      }
      // Lookout's own fields stay unmarked.
      for (const [name, property] of Object.entries<any>(schema.properties)) {
        if (!fields.includes(name)) expect(property['x-compat'], `${component}.${name}`).toBeUndefined();
      }
    });
  }

  it('marks the type and description of each detection method, and required error detail', () => {
    const method = doc.components.schemas.ModelsAvailableResponse.properties.detection_methods.items;
    for (const field of ['type', 'description']) expect(method.properties[field]['x-compat'], field).toBe(true);
    expect(doc.components.schemas.Error.required).toContain('detail');
  });

  it('says so in the description, with where to read more', () => {
    expect(doc.info.description).toMatch(/Compatibility \(original v1\.2\.0\)/);
    expect(doc.info.description).toMatch(/Moving from the original service/);
  });
});
