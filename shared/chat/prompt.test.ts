import { describe, expect, it } from 'vitest';
import type { FaceResult } from '../api/index.js';
import type { DetectedObject } from '../objects/types.js';
import type { FacialFeatures } from '../vision/facial-features.js';
import { buildAnalysisContext, buildChatMessages, DEFAULT_SYSTEM_PROMPT, FEATURES_NOTE, featuresText, MAX_LISTED_FACES } from './prompt.js';

const faces: FaceResult[] = [
  { x: 20, y: 40, w: 100, h: 100, label: 'alice', confidence: 87.4, distance: 30 },
  { x: 500, y: 40, w: 90, h: 90, label: 'unknown', confidence: 0 },
  { x: 280, y: 60, w: 80, h: 80, label: 'bob', confidence: 71.6, distance: 45 },
  { x: 400, y: 300, w: 50, h: 50, label: 'unknown', confidence: 0 },
];
const obj = (class_name: DetectedObject['class_name'], class_id: number): DetectedObject => ({
  class_id,
  class_name,
  confidence: 0.8,
  x: 0,
  y: 0,
  w: 10,
  h: 10,
});
const objects: DetectedObject[] = [obj('cup', 41), obj('person', 0), obj('laptop', 63), obj('person', 0), obj('cup', 41), obj('person', 0)];
const sample = { faces, objects, detectionMethod: 'local' as const, recognitionModel: 'lbph' as const, imageWidth: 640, imageHeight: 480 };

describe('buildAnalysisContext', () => {
  it('lists recognised faces with confidence in percent, counts unknown faces, counts objects by class', () => {
    const text = buildAnalysisContext(sample);
    expect(text).toContain('640x480');
    expect(text).toContain('face detection method: local');
    expect(text).toContain('recognition model: lbph');
    expect(text).toContain('4 faces detected, 2 recognised, 2 unknown');
    expect(text).toContain('- alice: confidence 87%, left of the image');
    expect(text).toContain('- bob: confidence 72%, centre of the image');
    expect(text).toContain('- 2 unknown faces (not recognised');
    // Most frequent class first, ties by name.
    expect(text).toContain('Objects: 6 objects detected: person 3, cup 2, laptop 1.');
    // Best match first.
    expect(text.indexOf('alice')).toBeLessThan(text.indexOf('bob'));
    // "unknown" is never presented as an identity line.
    expect(text).not.toMatch(/- unknown:/);
  });

  it('says when nothing was found, and names the remote method', () => {
    const text = buildAnalysisContext({ ...sample, faces: [], objects: [], detectionMethod: 'remote', recognitionModel: 'embedding' });
    expect(text).toContain('Faces: none detected.');
    expect(text).toContain('Objects: none detected.');
    expect(text).toContain('face detection method: remote');
    expect(text).toContain('recognition model: embedding');
  });

  it('uses the singular for one face and one object', () => {
    const text = buildAnalysisContext({ ...sample, faces: [faces[1]], objects: [obj('dog', 16)] });
    expect(text).toContain('1 face detected, 0 recognised, 1 unknown');
    expect(text).toContain('- 1 unknown face (');
    expect(text).toContain('Objects: 1 object detected: dog 1.');
  });

  it('keeps the text bounded for a crowd', () => {
    const crowd: FaceResult[] = Array.from({ length: 50 }, (_, i) => ({
      x: i,
      y: 0,
      w: 10,
      h: 10,
      label: `p${i}`,
      confidence: 50 + (i % 40),
    }));
    const text = buildAnalysisContext({ ...sample, faces: crowd, objects: [] });
    expect(text.split('\n').filter((l) => /^- p\d+:/.test(l))).toHaveLength(MAX_LISTED_FACES);
    expect(text).toContain(`- and ${50 - MAX_LISTED_FACES} more recognised faces`);
    expect(text.length).toBeLessThan(2000);
  });

  it('is deterministic', () => {
    expect(buildAnalysisContext(sample)).toBe(
      buildAnalysisContext({ ...sample, faces: [...faces].reverse(), objects: [...objects].reverse() }),
    );
  });
});

describe('buildAnalysisContext with facial features', () => {
  const features = (f: Partial<FacialFeatures>): FacialFeatures => ({
    eyes: 2,
    eye_boxes: [],
    smiling: false,
    eyeglasses: false,
    face_too_small: false,
    ...f,
  });
  const withFeatures = [
    { ...faces[0], features: features({ eyeglasses: true }) },
    { ...faces[1], features: features({ smiling: true, eyes: 1 }) },
    { ...faces[2], features: features({}) },
    { ...faces[3], features: features({ eyes: 0, face_too_small: true }) },
  ];

  it('lists every face, unknown ones too, with its eyes, smile and eyeglasses', () => {
    const text = buildAnalysisContext({ ...sample, faces: withFeatures });
    expect(text).toContain('4 faces detected, 2 recognised, 2 unknown');
    expect(text).toContain('- alice: confidence 87%, left of the image; eyes seen: 2; smiling: no; eyeglasses: yes');
    expect(text).toContain('- bob: confidence 72%, centre of the image; eyes seen: 2; smiling: no; eyeglasses: no');
    expect(text).toContain('- unknown person (not recognised; identity not known), centre of the image; face too small to check');
    expect(text).toContain(
      '- unknown person (not recognised; identity not known), right of the image; eyes seen: 1; smiling: yes; eyeglasses: no',
    );
    expect(text).toContain(FEATURES_NOTE);
    // Known faces by confidence, then unknown ones left to right.
    const order = ['alice', 'bob', 'centre of the image; face too small', 'right of the image; eyes seen: 1'].map((t) => text.indexOf(t));
    expect(order).toEqual([...order].sort((p, q) => p - q));
    expect(text).not.toMatch(/- unknown:/);
  });

  it('is deterministic and bounded for a crowd', () => {
    expect(buildAnalysisContext({ ...sample, faces: withFeatures })).toBe(
      buildAnalysisContext({ ...sample, faces: [...withFeatures].reverse() }),
    );
    const crowd = Array.from({ length: 50 }, (_, i) => ({
      x: i,
      y: 0,
      w: 10,
      h: 10,
      label: i % 2 ? `p${i}` : 'unknown',
      confidence: i % 2 ? 60 : 0,
      features: features({}),
    }));
    const text = buildAnalysisContext({ ...sample, faces: crowd, objects: [] });
    expect(text.split('\n').filter((l) => /eyes seen/.test(l))).toHaveLength(MAX_LISTED_FACES);
    expect(text).toContain(`- and ${50 - MAX_LISTED_FACES} more faces`);
    expect(text.length).toBeLessThan(4000);
  });

  it('featuresText says when a face was too small to check', () => {
    expect(featuresText(features({ face_too_small: true }))).toBe('face too small to check eyes, smile or eyeglasses');
    expect(featuresText(features({ eyes: 1, smiling: true }))).toBe('eyes seen: 1; smiling: yes; eyeglasses: no');
  });
});

describe('buildChatMessages', () => {
  it('holds the system text, then one user turn with the context before the question', () => {
    const context = buildAnalysisContext(sample);
    const messages = buildChatMessages({ systemPrompt: 'Be brief.', context, question: '  Who is in the picture?  ' });
    expect(messages).toHaveLength(2);
    expect(messages[0]).toEqual({ role: 'system', content: 'Be brief.' });
    expect(messages[1].role).toBe('user');
    expect(messages[1].content).toContain(context);
    expect(messages[1].content).toMatch(/Question: Who is in the picture\?$/);
    expect(messages[1].content.indexOf(context)).toBe(0);
  });

  it('without an image carries no image context at all', () => {
    const messages = buildChatMessages({ systemPrompt: 'Be brief.', question: 'What can you do?' });
    expect(messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'What can you do?' },
    ]);
    const all = messages.map((m) => m.content).join('\n');
    expect(all).not.toMatch(/analysis|Faces:|Objects:/);
  });

  it('falls back to the default system prompt, which forbids inventing identities', () => {
    for (const systemPrompt of [undefined, '', '   ']) {
      expect(buildChatMessages({ systemPrompt, question: 'hi' })[0].content).toBe(DEFAULT_SYSTEM_PROMPT);
    }
    expect(DEFAULT_SYSTEM_PROMPT).toMatch(/Lookout/);
    expect(DEFAULT_SYSTEM_PROMPT).toMatch(/never invent/i);
  });
});
