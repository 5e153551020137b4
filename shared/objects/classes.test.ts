import { describe, expect, it } from 'vitest';
import { className, OBJECT_CLASSES, objectDisplayName } from './classes.js';

// The spec's table (service-spec.md, "Object classes"), alphabetical, row by row.
const SPEC_CLASSES = [
  'aeroplane',
  'apple',
  'backpack',
  'banana',
  'baseball bat',
  'baseball glove',
  'bear',
  'bed',
  'bench',
  'bicycle',
  'bird',
  'boat',
  'book',
  'bottle',
  'bowl',
  'broccoli',
  'bus',
  'cake',
  'car',
  'carrot',
  'cat',
  'cell phone',
  'chair',
  'clock',
  'cow',
  'cup',
  'diningtable',
  'dog',
  'donut',
  'elephant',
  'fire hydrant',
  'fork',
  'frisbee',
  'giraffe',
  'hair drier',
  'handbag',
  'horse',
  'hot dog',
  'keyboard',
  'kite',
  'knife',
  'laptop',
  'microwave',
  'motorbike',
  'mouse',
  'orange',
  'oven',
  'parking meter',
  'person',
  'pizza',
  'pottedplant',
  'refrigerator',
  'remote',
  'sandwich',
  'scissors',
  'sheep',
  'sink',
  'skateboard',
  'skis',
  'snowboard',
  'sofa',
  'spoon',
  'sports ball',
  'stop sign',
  'suitcase',
  'surfboard',
  'teddy bear',
  'tennis racket',
  'tie',
  'toaster',
  'toilet',
  'toothbrush',
  'traffic light',
  'train',
  'truck',
  'tvmonitor',
  'umbrella',
  'vase',
  'wine glass',
  'zebra',
];

describe('OBJECT_CLASSES', () => {
  it('holds the spec list of 80 names, each once', () => {
    const spec = SPEC_CLASSES;
    expect(spec).toHaveLength(80);
    expect(new Set(OBJECT_CLASSES).size).toBe(80);
    expect([...OBJECT_CLASSES].sort()).toEqual([...spec].sort());
  });

  it('is in COCO model order with Darknet spellings', () => {
    expect(OBJECT_CLASSES.slice(0, 6)).toEqual(['person', 'bicycle', 'car', 'motorbike', 'aeroplane', 'bus']);
    expect(className(15)).toBe('cat');
    expect(className(32)).toBe('sports ball');
    expect(className(41)).toBe('cup');
    expect(OBJECT_CLASSES.slice(56, 63)).toEqual(['chair', 'sofa', 'pottedplant', 'bed', 'diningtable', 'toilet', 'tvmonitor']);
    expect(className(79)).toBe('toothbrush');
    expect(() => className(80)).toThrow(RangeError);
  });
});

describe('objectDisplayName', () => {
  it('shows every class in words, with the API names unchanged', () => {
    expect(objectDisplayName('diningtable')).toBe('dining table');
    expect(objectDisplayName('pottedplant')).toBe('potted plant');
    expect(objectDisplayName('tvmonitor')).toBe('TV monitor');
    expect(objectDisplayName('traffic light')).toBe('traffic light');
    expect(objectDisplayName('hard_hat')).toBe('hard hat');
    expect(objectDisplayName('constructor')).toBe('constructor');
    // No run-together Darknet spelling is left: each shown name is words a person reads.
    for (const name of OBJECT_CLASSES) expect(objectDisplayName(name)).not.toMatch(/^(pottedplant|diningtable|tvmonitor)$/);
    expect(OBJECT_CLASSES).toContain('diningtable');
  });
});
