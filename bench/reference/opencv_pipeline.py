"""OpenCV reference for /api/recognize: the original service's per-request work, single-threaded.

Reads the JPEG bytes, decodes, converts to gray, runs detectMultiScale and predicts every face with an LBPH
model (Lookout's own training.yml, so both sides predict against the same histograms). Prints JSON with the
median time per request and the derived rate.
Usage: /usr/bin/python3 opencv_pipeline.py CASCADE TRAINING_YML IMAGE RUNS
"""
import json
import statistics
import sys
import time

import cv2
import numpy as np

cv2.setNumThreads(1)
cascade_path, model_path, image_path, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
cascade = cv2.CascadeClassifier(cascade_path)
recognizer = cv2.face.LBPHFaceRecognizer_create()
recognizer.read(model_path)
data = np.frombuffer(open(image_path, "rb").read(), dtype=np.uint8)


def once():
    image = cv2.imdecode(data, cv2.IMREAD_COLOR)
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    faces = cascade.detectMultiScale(gray, scaleFactor=1.1, minNeighbors=5, minSize=(30, 30))
    for (x, y, w, h) in faces:
        face = cv2.resize(gray[y:y + h, x:x + w], (100, 100), interpolation=cv2.INTER_LINEAR_EXACT)
        recognizer.predict(face)
    return len(faces)


count = once()
times = []
for _ in range(runs):
    t0 = time.perf_counter()
    once()
    times.append((time.perf_counter() - t0) * 1000)
median_ms = statistics.median(times)
print(json.dumps({"median_ms": median_ms, "rate_per_s": 1000 / median_ms, "faces": count, "runs": runs}))
