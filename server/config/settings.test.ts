import { describe, expect, it } from 'vitest';
import { loadSettings, SETTINGS, SettingsError } from './settings.js';

const appDir = '/app';

describe('loadSettings', () => {
  it('has the documented defaults', () => {
    const s = loadSettings({}, appDir);
    expect(s.port).toBe(8080);
    expect(s.host).toBe('127.0.0.1');
    expect(s.recognitionModel).toBe('lbph');
    expect(s.remoteDetectorEnabled).toBe(true);
    expect(s.remoteDetectorUrl).toBe('');
    expect(s.remoteDetectorModelName).toBe('face-detection-retail-0005');
    expect(s.remoteDetectorConfidenceThreshold).toBe(0.5);
    expect(s.remoteDetectorDefaultMethod).toBe('local');
    expect(s.chatEnabled).toBe(true);
    expect(s.persistenceEnabled).toBe(true);
    expect(s.persistenceSize).toBe('1Gi');
    expect(s.maxBodyBytes).toBe(10 * 1024 * 1024);
    expect(s.cascadeFile).toBe('/app/public/models/haarcascade_frontalface_alt2.xml');
  });

  it('names every spec setting by its path in upper snake case', () => {
    const envNames = Object.values(SETTINGS).map((s) => s.env);
    for (const name of [
      'RECOGNITION_MODEL',
      'REMOTE_DETECTOR_ENABLED',
      'REMOTE_DETECTOR_URL',
      'REMOTE_DETECTOR_MODEL_NAME',
      'REMOTE_DETECTOR_CONFIDENCE_THRESHOLD',
      'REMOTE_DETECTOR_DEFAULT_METHOD',
      'CHAT_ENABLED',
      'PERSISTENCE_ENABLED',
      'PERSISTENCE_SIZE',
      'PORT',
      'HOST',
      'DATA_DIR',
    ]) {
      expect(envNames).toContain(name);
    }
  });

  it('accepts the original aliases and boolean spellings', () => {
    const s = loadSettings(
      { RECOGNITION_MODEL: 'dlib', REMOTE_DETECTOR_DEFAULT_METHOD: 'OpenVINO', CHAT_ENABLED: 'no', PERSISTENCE_ENABLED: '0' },
      appDir,
    );
    expect(s.recognitionModel).toBe('embedding');
    expect(s.remoteDetectorDefaultMethod).toBe('remote');
    expect(s.chatEnabled).toBe(false);
    expect(s.persistenceEnabled).toBe(false);
  });

  it.each([
    ['PORT', 'eighty', 'PORT'],
    ['PORT', '70000', 'PORT'],
    ['RECOGNITION_MODEL', 'eigenfaces', 'RECOGNITION_MODEL'],
    ['REMOTE_DETECTOR_CONFIDENCE_THRESHOLD', '1.5', 'REMOTE_DETECTOR_CONFIDENCE_THRESHOLD'],
    ['REMOTE_DETECTOR_URL', 'ftp://x', 'REMOTE_DETECTOR_URL'],
    ['CHAT_ENABLED', 'maybe', 'CHAT_ENABLED'],
    ['PERSISTENCE_SIZE', 'big', 'PERSISTENCE_SIZE'],
  ])('rejects %s=%s with a message naming it and what it accepts', (name, value, mentioned) => {
    let error: unknown;
    try {
      loadSettings({ [name]: value }, appDir);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(SettingsError);
    const message = (error as Error).message;
    expect(message).toContain(mentioned);
    // What it accepts: the README's description of the setting is part of the message.
    const spec = Object.values(SETTINGS).find((s) => s.env === name)!;
    expect(message).toContain(spec.doc);
  });

  it('reports every bad setting at once', () => {
    expect(() => loadSettings({ PORT: 'x', CHAT_ENABLED: 'x' }, appDir)).toThrow(/PORT[\s\S]*CHAT_ENABLED/);
  });

  it('rejects an inverted LBPH window', () => {
    expect(() => loadSettings({ LBPH_DISTANCE_MIN: '90', LBPH_DISTANCE_MAX: '85' }, appDir)).toThrow(/LBPH_DISTANCE_MIN/);
  });

  it('#35: holds the default limits to the calibrated bounds, unless THRESHOLD_BOUNDS=off', () => {
    expect(() => loadSettings({ EMBEDDING_DISTANCE_MAX: '2' }, appDir)).toThrow(
      /EMBEDDING_DISTANCE_MAX: must be at most 0.55 \(the calibrated bound: /,
    );
    expect(() => loadSettings({ LBPH_DISTANCE_MAX: '86' }, appDir)).toThrow(/LBPH_DISTANCE_MAX: must be at most 85 .*THRESHOLD_BOUNDS=off/);
    expect(loadSettings({ LBPH_DISTANCE_MAX: '85', EMBEDDING_DISTANCE_MAX: '0.55' }, appDir).lbphDistanceMax).toBe(85);
    expect(loadSettings({ EMBEDDING_DESCRIPTOR: 'faceres-1024', EMBEDDING_DISTANCE_MAX: '0.92' }, appDir).embeddingDistanceMax).toBe(0.92);
    expect(() => loadSettings({ EMBEDDING_DESCRIPTOR: 'faceres-1024', EMBEDDING_DISTANCE_MAX: '0.93' }, appDir)).toThrow(/at most 0.92/);
    expect(loadSettings({ EMBEDDING_DISTANCE_MAX: '2', THRESHOLD_BOUNDS: 'off' }, appDir).embeddingDistanceMax).toBe(2);
  });
});
