#!/usr/bin/python3
"""Reference timing for bench/lbph.bench.ts: OpenCV 4.6 LBPHFaceRecognizer.predict, one thread.

Usage: /usr/bin/python3 bench/reference/opencv_lbph.py <fixture dir> <runs> <query png> <train png>...
Train file names start with p<label>_. Prints one JSON line: median ms, prediction, OpenCV version.
"""
import json
import os
import sys
import time

import cv2
import numpy as np


def main():
    fix, runs, query, train = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
    cv2.setNumThreads(1)
    load = lambda name: cv2.imread(os.path.join(fix, name), cv2.IMREAD_GRAYSCALE)
    labels = np.array([int(os.path.basename(t)[1:].split('_')[0]) for t in train], np.int32)
    rec = cv2.face.LBPHFaceRecognizer_create()
    rec.train([load(t) for t in train], labels)
    q = load(query)
    for _ in range(max(20, runs // 10)):
        rec.predict(q)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        label, dist = rec.predict(q)
        times.append((time.perf_counter() - t0) * 1000)
    print(json.dumps({'medianMs': float(np.median(times)), 'label': int(label), 'distance': float(dist),
                      'runs': runs, 'opencv': cv2.__version__}))


if __name__ == '__main__':
    main()
