import { describe, expect, it } from 'vitest';
import { DESCRIPTOR_MODELS, descriptorMismatch, isDescriptorModelId } from './descriptor-models.js';

describe('descriptor models', () => {
  it('knows both ids and their lengths', () => {
    expect(DESCRIPTOR_MODELS['faceapi-128'].dim).toBe(128);
    expect(DESCRIPTOR_MODELS['faceres-1024'].dim).toBe(1024);
    expect(isDescriptorModelId('faceres-1024')).toBe(true);
    expect(isDescriptorModelId('faceres')).toBe(false);
  });

  it('says to train again when a trained model comes from another descriptor model', () => {
    expect(descriptorMismatch('faceapi-128', 'faceapi-128')).toBeNull();
    expect(descriptorMismatch('faceapi-128', 'faceres-1024')).toMatch(
      /made with faceapi-128 descriptors, but this recognizer computes faceres-1024 .*train again/,
    );
  });
});
