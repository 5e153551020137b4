import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { contentTypeOf, etagMatches, resolveUnder } from './static-files.js';

describe('etagMatches', () => {
  it('compares weakly, with or without quotes, in lists and with *', () => {
    expect(etagMatches('"abc"', '"abc"')).toBe(true);
    expect(etagMatches('W/"abc"', '"abc"')).toBe(true);
    expect(etagMatches('abc', '"abc"')).toBe(true);
    expect(etagMatches('"x", "abc"', '"abc"')).toBe(true);
    expect(etagMatches('*', '"abc"')).toBe(true);
    expect(etagMatches('"abd"', '"abc"')).toBe(false);
    expect(etagMatches(undefined, '"abc"')).toBe(false);
    expect(etagMatches('', '"abc"')).toBe(false);
  });
});

describe('resolveUnder', () => {
  const root = '/srv/app';
  it('maps a plain path under the root', () => {
    expect(resolveUnder(root, '/models/a.json')).toBe(path.join(root, 'models/a.json'));
    expect(resolveUnder(root, '/models/face%20api.json')).toBe(path.join(root, 'models/face api.json'));
  });
  it('refuses dot segments, hidden files, empty segments, backslashes and bad escapes', () => {
    for (const p of [
      '/models/../x',
      '/models/%2e%2e/x',
      '/models/.env',
      '/models//a',
      '/models/a%5c..%5cb',
      '/models/%E0%A4%A',
      '/models/a%00',
      '/',
    ]) {
      expect(resolveUnder(root, p), p).toBeNull();
    }
  });
});

describe('contentTypeOf', () => {
  it('knows the model file types', () => {
    expect(contentTypeOf('a.json')).toBe('application/json');
    expect(contentTypeOf('a.bin')).toBe('application/octet-stream');
    expect(contentTypeOf('a.onnx')).toBe('application/octet-stream');
    expect(contentTypeOf('a.wasm')).toBe('application/wasm');
    expect(contentTypeOf('a.xml')).toMatch(/^application\/xml/);
    expect(contentTypeOf('MODELS.md')).toMatch(/^text\/markdown/);
    expect(contentTypeOf('app.webmanifest')).toBe('application/manifest+json');
    expect(contentTypeOf('x.css')).toMatch(/^text\/css/);
    expect(contentTypeOf('noext')).toBe('application/octet-stream');
  });
});
