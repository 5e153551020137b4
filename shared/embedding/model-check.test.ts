import { describe, expect, it } from 'vitest';
import { refuseOtherDescriptorModel } from './model-check.js';

describe('refuseOtherDescriptorModel', () => {
  it('accepts a model of the running descriptor model', () => {
    expect(refuseOtherDescriptorModel({ dim: 128 }, 'faceapi-128')).toBeNull();
    expect(refuseOtherDescriptorModel({ dim: 1024 }, 'faceres-1024', 'faceres-1024')).toBeNull();
  });

  it('refuses a model of the other one, saying to train again', () => {
    expect(refuseOtherDescriptorModel({ dim: 128 }, 'faceres-1024')).toMatch(
      /made with faceapi-128 descriptors.*faceres-1024.*train again/,
    );
    expect(refuseOtherDescriptorModel({ dim: 1024 }, 'faceapi-128')).toMatch(/made with faceres-1024 descriptors.*train again/);
  });

  it('refuses lengths no model makes, and an id that does not fit the length', () => {
    expect(refuseOtherDescriptorModel({ dim: 64 }, 'faceapi-128')).toMatch(/64-value descriptors, which no descriptor model here makes/);
    expect(refuseOtherDescriptorModel({ dim: 128 }, 'faceapi-128', 'faceres-1024')).toMatch(/says faceres-1024 but holds 128-value/);
  });
});
