/**
 * Settings for a Lookout whose remote detector is Lookout's own model server running in the test's process: one
 * worker and only the face engines (the model server's FaceBoxes shares the cores), the remote status checked often,
 * and a generous detection timeout (under load a FaceBoxes call in the same process may pass the default 5 s).
 */
export const IN_PROCESS_MODEL_SERVER_ENV = {
  WORKERS: '1',
  EMBEDDING_ENABLED: 'false',
  OBJECT_DETECTION_ENABLED: 'false',
  CHAT_ENABLED: 'false',
  SIGHTINGS_ENABLED: 'false',
  REMOTE_DETECTOR_CHECK_INTERVAL_MS: '200',
  REMOTE_DETECTOR_TIMEOUT_MS: '60000',
};
