/**
 * The 80 COCO classes in the order of the detector's class axis (COCO's category order, index = `class_id`),
 * spelled as the service spec lists them: Darknet's `coco.names` spellings (`motorbike`, `aeroplane`, `sofa`,
 * `pottedplant`, `diningtable`, `tvmonitor`). Shared by every detector that outputs COCO's 80 classes.
 */
export const OBJECT_CLASSES = [
  'person',
  'bicycle',
  'car',
  'motorbike',
  'aeroplane',
  'bus',
  'train',
  'truck',
  'boat',
  'traffic light',
  'fire hydrant',
  'stop sign',
  'parking meter',
  'bench',
  'bird',
  'cat',
  'dog',
  'horse',
  'sheep',
  'cow',
  'elephant',
  'bear',
  'zebra',
  'giraffe',
  'backpack',
  'umbrella',
  'handbag',
  'tie',
  'suitcase',
  'frisbee',
  'skis',
  'snowboard',
  'sports ball',
  'kite',
  'baseball bat',
  'baseball glove',
  'skateboard',
  'surfboard',
  'tennis racket',
  'bottle',
  'wine glass',
  'cup',
  'fork',
  'knife',
  'spoon',
  'bowl',
  'banana',
  'apple',
  'sandwich',
  'orange',
  'broccoli',
  'carrot',
  'hot dog',
  'pizza',
  'donut',
  'cake',
  'chair',
  'sofa',
  'pottedplant',
  'bed',
  'diningtable',
  'toilet',
  'tvmonitor',
  'laptop',
  'mouse',
  'remote',
  'keyboard',
  'cell phone',
  'microwave',
  'oven',
  'toaster',
  'sink',
  'refrigerator',
  'book',
  'clock',
  'vase',
  'scissors',
  'teddy bear',
  'hair drier',
  'toothbrush',
] as const;

export type ObjectClassName = (typeof OBJECT_CLASSES)[number];

export const OBJECT_CLASS_COUNT = OBJECT_CLASSES.length;

/** The name of a class index, or throws for an index outside 0..79. */
export function className(classId: number): ObjectClassName {
  const name = OBJECT_CLASSES[classId];
  if (name === undefined) throw new RangeError(`class id ${classId} is outside 0..${OBJECT_CLASSES.length - 1}`);
  return name;
}

/**
 * How the pages show a class: Darknet's run-together spellings as words ("dining table"); the API keeps the spec's
 * names. Any other name (an operator's own model) is shown as it is, with `_` as a space.
 */
const DISPLAY_NAMES: Readonly<Record<string, string>> = {
  pottedplant: 'potted plant',
  diningtable: 'dining table',
  tvmonitor: 'TV monitor',
};

export function objectDisplayName(className: string): string {
  return Object.hasOwn(DISPLAY_NAMES, className) ? DISPLAY_NAMES[className] : className.replace(/_/g, ' ');
}
