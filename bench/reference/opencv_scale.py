#!/usr/bin/python3
"""Reference for bench/scale.bench.ts: OpenCV 4.6's LBPH on the same generated gallery, one thread.

Usage:
  /usr/bin/python3 bench/reference/opencv_scale.py boxes CASCADE MIN_SIDE IMAGE...
      prints the faces of at least MIN_SIDE px in each image: {"image": [[x, y, w, h], ...], ...}
  /usr/bin/python3 bench/reference/opencv_scale.py faceless CASCADE DIR [FILE...]
      prints the files under DIR (relative paths; only the FILEs given, if any) in which the cascade finds no face
  /usr/bin/python3 bench/reference/opencv_scale.py lbph CASCADE GALLERY_DIR ADDED_LABEL PROBE_DIR YML_OUT
      GALLERY_DIR/<label>/<n>.jpg; every face crop is the largest detection, gray, 100x100 (as opencv_pipeline.py).
      Times: decode+detect+crop of the gallery (the original service's rebuild redoes it), train() from scratch
      without ADDED_LABEL, update() with ADDED_LABEL's crops, write() of the model, predict() of each probe crop.
"""
import json
import os
import statistics
import sys
import time

import cv2
import numpy as np

cv2.setNumThreads(1)


def largest_face(cascade, gray):
    faces = cascade.detectMultiScale(gray, scaleFactor=1.1, minNeighbors=5, minSize=(30, 30))
    if len(faces) == 0:
        return None
    x, y, w, h = max(faces, key=lambda f: f[2] * f[3])
    return cv2.resize(gray[y:y + h, x:x + w], (100, 100), interpolation=cv2.INTER_LINEAR_EXACT)


def boxes(cascade_path, min_side, images):
    cascade = cv2.CascadeClassifier(cascade_path)
    out = {}
    for image in images:
        gray = cv2.imread(image, cv2.IMREAD_GRAYSCALE)
        faces = cascade.detectMultiScale(gray, scaleFactor=1.1, minNeighbors=5, minSize=(30, 30))
        out[image] = [[int(v) for v in f] for f in faces if f[2] >= min_side]
    print(json.dumps(out))


def faceless(cascade_path, root, files):
    cascade = cv2.CascadeClassifier(cascade_path)
    if not files:
        files = [os.path.relpath(os.path.join(folder, name), root) for folder, _, names in os.walk(root) for name in sorted(names)]
    out = [f for f in files if largest_face(cascade, cv2.imread(os.path.join(root, f), cv2.IMREAD_GRAYSCALE)) is None]
    print(json.dumps(out))


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def lbph(cascade_path, gallery, added, probes_dir, yml_out):
    cascade = cv2.CascadeClassifier(cascade_path)
    t0 = time.perf_counter()
    crops, labels, added_crops, skipped = [], [], [], 0
    names = sorted(os.listdir(gallery))
    for index, label in enumerate(names):
        folder = os.path.join(gallery, label)
        for name in sorted(os.listdir(folder)):
            crop = largest_face(cascade, cv2.imread(os.path.join(folder, name), cv2.IMREAD_GRAYSCALE))
            if crop is None:
                skipped += 1
            elif label == added:
                added_crops.append(crop)
            else:
                crops.append(crop)
                labels.append(index)
    prepare_ms = (time.perf_counter() - t0) * 1000
    added_index = names.index(added)

    recognizer = cv2.face.LBPHFaceRecognizer_create()
    t0 = time.perf_counter()
    recognizer.train(crops, np.array(labels, np.int32))
    train_ms = (time.perf_counter() - t0) * 1000
    t0 = time.perf_counter()
    recognizer.update(added_crops, np.array([added_index] * len(added_crops), np.int32))
    update_ms = (time.perf_counter() - t0) * 1000
    t0 = time.perf_counter()
    recognizer.write(yml_out)
    write_ms = (time.perf_counter() - t0) * 1000
    yml_bytes = os.path.getsize(yml_out)
    os.remove(yml_out)

    probes = [largest_face(cascade, cv2.imread(os.path.join(probes_dir, n), cv2.IMREAD_GRAYSCALE)) for n in sorted(os.listdir(probes_dir))]
    probes = [p for p in probes if p is not None]
    recognizer.predict(probes[0])
    times = []
    for probe in probes:
        t0 = time.perf_counter()
        recognizer.predict(probe)
        times.append((time.perf_counter() - t0) * 1000)
    print(json.dumps({
        'opencv': cv2.__version__, 'faces': len(crops) + len(added_crops), 'skipped': skipped,
        'prepare_ms': prepare_ms, 'train_ms': train_ms, 'update_ms': update_ms, 'write_ms': write_ms,
        'yml_bytes': yml_bytes, 'predict_p50_ms': statistics.median(times), 'predict_p95_ms': percentile(times, 95),
        'probes': len(probes),
    }))


if __name__ == '__main__':
    if sys.argv[1] == 'boxes':
        boxes(sys.argv[2], int(sys.argv[3]), sys.argv[4:])
    elif sys.argv[1] == 'faceless':
        faceless(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        lbph(*sys.argv[2:7])
