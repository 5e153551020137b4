import { describe, expect, it } from 'vitest';
import { trainEmbedding } from '../../../shared/embedding/matcher';
import { encodeEmbeddingFile } from '../../../shared/embedding/model-file';
import type { TrainedModelsResponse } from '../../../shared/api/index';
import { downloadCorrections, downloadModels, embeddingDescriptorOf, embeddingModelRefusal } from './models';

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

describe('the corrections a browser downloads with the models', () => {
  const index = (corrections?: TrainedModelsResponse['corrections']): TrainedModelsResponse => ({
    version: 'v1c',
    trained_at: '2026-01-01T00:00:00.000Z',
    labels: ['grace'],
    lbph: { available: true, url: '/api/models/trained/lbph', bytes: 4 },
    embedding: { available: false, url: '/api/models/trained/embedding', bytes: null },
    ...(corrections ? { models_version: 'v1', corrections } : {}),
  });
  const served = () => {
    const urls: string[] = [];
    const fetch = async (url: string) => {
      urls.push(url);
      return new Response(url.endsWith('/corrections') ? 'corrections-file' : 'yaml');
    };
    return { urls, fetch };
  };

  it('come with the files, from the URL the list gives, relative to the list', async () => {
    const { urls, fetch } = served();
    const got = await downloadModels(
      index({ available: true, url: '/api/models/trained/corrections', bytes: 16, count: 1 }),
      '/api/models/trained',
      'http://kiosk.test/live',
      fetch,
    );
    expect(got).toEqual({ version: 'v1c', lbphYaml: 'yaml', embeddingsJson: null, corrections: 'corrections-file' });
    expect(urls.sort()).toEqual(['http://kiosk.test/api/models/trained/corrections', 'http://kiosk.test/api/models/trained/lbph']);
  });

  it('are null (cleared in the engine) when the list has none, or comes from a server without corrections', async () => {
    const { urls, fetch } = served();
    const none = index({ available: false, url: '/api/models/trained/corrections', bytes: null, count: 0 });
    expect(await downloadCorrections(none, '/api/models/trained', 'http://kiosk.test/', fetch)).toBeNull();
    expect((await downloadModels(index(), '/api/models/trained', 'http://kiosk.test/', fetch)).corrections).toBeNull();
    expect(urls).toEqual(['http://kiosk.test/api/models/trained/lbph']);
  });

  it('say the server answered what, when the download fails', async () => {
    const list = index({ available: true, url: '/api/models/trained/corrections', bytes: 16, count: 1 });
    const failing = async () => new Response('no', { status: 503 });
    await expect(downloadCorrections(list, '/api/models/trained', 'http://kiosk.test/', failing)).rejects.toThrow(
      'the server answered 503 for the corrections',
    );
  });
});
