import { describe, expect, it } from 'vitest';
import { trainEmbedding } from '../../../shared/embedding/matcher';
import { encodeEmbeddingFile } from '../../../shared/embedding/model-file';
import { embeddingDescriptorOf, embeddingModelRefusal } from './models';

const names = [{ label: 0, name: 'grace' }];
const faceapiFile = encodeEmbeddingFile(trainEmbedding([{ label: 0, descriptor: new Float32Array(128).fill(0.1) }]), names);
const faceresFile = encodeEmbeddingFile(trainEmbedding([{ label: 0, descriptor: new Float32Array(1024).fill(1 / 32) }], 1024), names);

describe('the embedding model a browser downloads', () => {
  it('says which descriptor model made it', () => {
    expect(embeddingDescriptorOf(faceapiFile)).toBe('faceapi-128');
    expect(embeddingDescriptorOf(faceresFile)).toBe('faceres-1024');
  });

  it('is refused by an engine of another descriptor model, with the reason, never mixed', () => {
    expect(embeddingModelRefusal(faceresFile, 'faceres-1024')).toBeNull();
    expect(embeddingModelRefusal(faceapiFile, 'faceres-1024')).toMatch(/made with faceapi-128 descriptors.*train again/);
    expect(embeddingModelRefusal(faceresFile, 'faceapi-128')).toMatch(/made with faceres-1024 descriptors.*train again/);
  });
});
