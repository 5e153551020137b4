/**
 * Wires the face step and the enrollment of `npm run idp` from its settings: the backend client (the Lookout API
 * at IDP_BACKEND_URL, as `<realm>-service`), Human's liveness models, the face verifier and the enrollment, plus
 * what the interaction pages need (the camera size; app.ts keeps the attempt limits).
 */
import { createBackend } from './backend.js';
import { createEnrollment } from './enrollment.js';
import { createEnrollmentSync, type EnrollmentSync } from './enrollment-sync.js';
import { createFaceVerifier } from './face-verifier.js';
import type { EnrollmentHandler, FaceVerifier } from './flow.js';
import { createLivenessChecker } from './liveness.js';
import type { IdpSettings } from './settings.js';
import type { UserStore } from './users.js';
import type { Logger } from '../logger.js';

export interface BiometricWiring {
  faceVerifier?: FaceVerifier;
  enrollment?: EnrollmentHandler;
  /** The users' links to their face data, checked against the API's deletions (enrollment-sync.ts). */
  enrollmentSync?: EnrollmentSync;
  camera: { width: number; height: number; maxEnrollmentImages: number };
}

export function biometricWiring(o: {
  settings: IdpSettings;
  users: UserStore;
  log: Logger;
  /** The URL this process listens on (http://host:port). */
  url: string;
  mountPath: string;
  /** Build the real verifier and enrollment (else the caller's, or the fail-closed defaults). */
  real: boolean;
}): BiometricWiring {
  const { settings } = o;
  const common = {
    camera: { width: settings.webcamWidth, height: settings.webcamHeight, maxEnrollmentImages: settings.maxEnrollmentImages },
  };
  if (!o.real) return common;
  // The IdP's own token endpoint, reached on this process directly (IDP_ISSUER may name a proxy it cannot reach).
  const self = new URL(o.url);
  if (self.hostname === '0.0.0.0') self.hostname = '127.0.0.1';
  if (self.hostname === '[::]') self.hostname = '[::1]';
  const backend = createBackend({
    baseUrl: settings.backendUrl,
    timeoutMs: settings.backendTimeout,
    tokenEndpoint: () => `${self.origin}${o.mountPath}/protocol/openid-connect/token`,
    clientId: `${settings.realm}-service`,
    clientSecret: settings.serviceClientSecret,
  });
  const enrollmentSync = createEnrollmentSync({ backend, users: o.users, log: o.log });
  return {
    ...common,
    enrollmentSync,
    faceVerifier: createFaceVerifier({
      backend,
      liveness: createLivenessChecker(settings.modelDir),
      confidenceThreshold: settings.confidenceThreshold,
      livenessMin: settings.livenessMin,
      recognitionModel: settings.recognitionModel,
      maxVerifyDistance: settings.maxVerifyDistance,
      enrollment: enrollmentSync,
    }),
    enrollment: createEnrollment({ backend, users: o.users, maxImages: settings.maxEnrollmentImages }),
  };
}
