/**
 * Imported first by every entry point that may load onnxruntime-node: its Linux library (1.30) starts Microsoft's
 * telemetry when the first session is made, writing files into TMPDIR and trying HTTPS uploads. Lookout never
 * phones home, so it is switched off for the whole process. It has to be set on the main thread before any
 * worker creates a session: a worker's `process.env` is a copy that native code never sees.
 */
process.env.ORT_DISABLE_TELEMETRY = '1';
