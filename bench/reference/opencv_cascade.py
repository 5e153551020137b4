#!/usr/bin/python3
"""Reference timing for bench/cascade.bench.ts: OpenCV 4.6 CascadeClassifier.detectMultiScale, single-threaded.

Usage: /usr/bin/python3 bench/reference/opencv_cascade.py GRAY_PNG CASCADE_XML SCALE_FACTOR MIN_NEIGHBORS MIN_SIZE RUNS
Prints one JSON object: {"median_ms", "runs", "boxes", "opencv_version"}.
"""
import json
import statistics
import sys
import time

import cv2


def main():
    png, cascade, scale_factor, min_neighbors, min_size, runs = sys.argv[1:7]
    cv2.setNumThreads(1)
    gray = cv2.imread(png, cv2.IMREAD_GRAYSCALE)
    if gray is None:
        raise SystemExit(f'cannot read {png}')
    clf = cv2.CascadeClassifier(cascade)
    if clf.empty():
        raise SystemExit(f'cannot load {cascade}')
    kw = dict(scaleFactor=float(scale_factor), minNeighbors=int(min_neighbors), minSize=(int(min_size), int(min_size)))
    for _ in range(3):  # warm-up
        boxes = clf.detectMultiScale(gray, **kw)
    times = []
    for _ in range(int(runs)):
        t0 = time.perf_counter()
        boxes = clf.detectMultiScale(gray, **kw)
        times.append((time.perf_counter() - t0) * 1000)
    print(json.dumps(dict(median_ms=statistics.median(times), runs=len(times),
                          boxes=[list(map(int, b)) for b in (boxes if len(boxes) else [])],
                          opencv_version=cv2.__version__)))


if __name__ == '__main__':
    main()
