/**
 * The identity provider's HTTP server: `/health` and `/ready` for the process, the sign-in pages under
 * `<issuer path>/interaction/`, and oidc-provider for everything else under the issuer's path (mounted there
 * the way Express would: the prefix is cut from `url` and kept in `originalUrl`, which oidc-provider reads to
 * build its URLs).
 *
 * It listens first and builds the provider after, so that with port 0 (tests) the issuer names the real port.
 */
import { mkdir } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Provider } from 'oidc-provider';
import type { Logger } from '../logger.js';
import { adminApi } from './admin-api.js';
import { AttemptFileError, AttemptLimiter } from './attempts.js';
import { biometricWiring } from './biometrics.js';
import { CAMERA_SCRIPT } from './camera-script.js';
import { FileAdapter } from './file-adapter.js';
import { ENROLLMENT_UNAVAILABLE, type EnrollmentHandler, FACE_VERIFICATION_UNAVAILABLE, type FaceVerifier } from './flow.js';
import { hostChecker } from './host-check.js';
import { interactionHandler } from './interactions.js';
import { KeyStore } from './keys.js';
import { passkeyAdmin } from './passkey-admin.js';
import { PASSKEY_SCRIPT } from './passkey-script.js';
import { PasskeyStore, relyingPartyFor } from './passkeys.js';
import { createProvider } from './provider.js';
import { type IdpSettings, issuerFor } from './settings.js';
import { UserError, UserStore } from './users.js';

export interface IdpOptions {
  settings: IdpSettings;
  log: Logger;
  /** The face step; default: deny every sign-in (fails closed) until the face verification is built. */
  faceVerifier?: FaceVerifier;
  /** The enrollment required action; default: refuse (fails closed) until enrollment is built. */
  enrollment?: EnrollmentHandler;
  /**
   * Build the real face step and enrollment against IDP_BACKEND_URL (biometrics.ts; `npm run idp` does) where the
   * two options above are not given. Off by default, so an IdP started without it still fails closed.
   */
  biometrics?: boolean;
  /** Clock of the attempt limits, password and face (tests). */
  now?: () => number;
}

export interface RunningIdp {
  url: string;
  issuer: string;
  provider: Provider;
  users: UserStore;
  server: Server;
  close(): Promise<void>;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json');
  res.setHeader('Cache-Control', 'no-store');
  res.end(JSON.stringify(body));
}

/** Creates the bootstrap administrator when it does not exist yet (never changes an existing user). */
export async function bootstrapAdmin(users: UserStore, settings: IdpSettings, log: Logger): Promise<void> {
  if (settings.adminUsername === undefined || settings.adminPassword === undefined) return;
  if (await users.byUsername(settings.adminUsername)) return;
  try {
    const admin = await users.add(settings.adminUsername, settings.adminPassword, { admin: true, temporary: false });
    log.info('bootstrap administrator created', { username: admin.username });
  } catch (err) {
    // A concurrent start may have created it; anything else is a bad setting.
    if (err instanceof UserError && err.code === 'user_exists') return;
    throw err;
  }
}

/** The failures persisted in `file`; a file that cannot be understood is logged and started afresh (overwritten). */
async function openAttempts(file: string, max: number, windowMs: number, options: IdpOptions, log: Logger): Promise<AttemptLimiter> {
  try {
    return await AttemptLimiter.open(file, max, windowMs, options.now);
  } catch (err) {
    if (!(err instanceof AttemptFileError)) throw err;
    log.warn('attempt limits lost: the file is not readable, starting with none', { error: err.message });
    return new AttemptLimiter(max, windowMs, options.now, undefined, file);
  }
}

export async function startIdp(options: IdpOptions): Promise<RunningIdp> {
  const { settings, log } = options;
  await mkdir(settings.dataDir, { recursive: true, mode: 0o700 });
  const storeDir = path.join(settings.dataDir, 'oidc');
  const swept = await FileAdapter.sweep(storeDir);
  if (swept) log.info('expired identity records removed', { count: swept });
  const keys = await new KeyStore(settings.dataDir).load();
  const users = new UserStore(settings.dataDir);
  await bootstrapAdmin(users, settings, log);
  // Guessing passwords: 10 failures per username in 15 minutes lock it; the face step: BIOMETRIC_MAX_ATTEMPTS.
  const passwordFailures = await openAttempts(path.join(settings.dataDir, 'attempts-password.json'), 10, 15 * 60_000, options, log);
  const faceFailures = await openAttempts(
    path.join(settings.dataDir, 'attempts-face.json'),
    settings.maxAttempts,
    settings.attemptWindow * 1000,
    options,
    log,
  );

  let ready: ((req: IncomingMessage, res: ServerResponse) => void) | null = null;
  let hostAllowed: (req: IncomingMessage) => boolean = () => false;
  const server = createServer((req, res) => {
    if (!hostAllowed(req))
      return json(res, 421, {
        error: { code: 'host_not_allowed', message: 'This identity provider does not answer for that host name (ALLOWED_HOSTS).' },
      });
    const pathname = (req.url ?? '/').split('?')[0];
    if (pathname === '/health') return json(res, 200, { status: 'ok' });
    if (pathname === '/ready') return json(res, ready ? 200 : 503, { status: ready ? 'ready' : 'starting' });
    if (!ready) return json(res, 503, { error: { code: 'starting', message: 'The identity provider is starting.' } });
    ready(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(settings.port, settings.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const issuer = issuerFor(settings, port);
  const mountPath = new URL(issuer).pathname.replace(/\/+$/, '');
  hostAllowed = hostChecker(settings.allowedHosts, settings.host, issuer);

  const provider = createProvider({ issuer, settings, keys, users, storeDir, log });
  const providerCallback = provider.callback();
  const localUrl = `http://${settings.host.includes(':') ? `[${settings.host}]` : settings.host}:${port}`;
  const biometric = biometricWiring({ settings, users, log, url: localUrl, mountPath, real: options.biometrics === true });
  // Passkeys: the issuer is the relying party; an IP address cannot be one, so none are offered there.
  const passkeyStore = new PasskeyStore(settings.dataDir);
  const rp = relyingPartyFor(issuer, settings.realm);
  if (settings.passkeys !== 'off' && !rp) log.info('passkeys not offered: the issuer is an IP address (set IDP_ISSUER with a host name)');
  const passkeys = settings.passkeys !== 'off' && rp ? { policy: settings.passkeys, rp, store: passkeyStore } : undefined;
  const interactions = interactionHandler({
    provider,
    users,
    flows: new FileAdapter(storeDir, 'LoginFlow'),
    realm: settings.realm,
    mountPath,
    faceVerifier: options.faceVerifier ?? biometric.faceVerifier ?? FACE_VERIFICATION_UNAVAILABLE,
    enrollment: options.enrollment ?? biometric.enrollment ?? ENROLLMENT_UNAVAILABLE,
    camera: biometric.camera,
    passwordFailures,
    faceFailures,
    enrollmentSync: biometric.enrollmentSync,
    passkeys,
    log,
  });
  const cameraScript = `${mountPath}/assets/camera.js`;
  const passkeyScript = `${mountPath}/assets/passkey.js`;
  const interactionPrefix = `${mountPath}/interaction/`;
  // User administration for the web app's Admin page (admin-api.ts), at Keycloak's admin path.
  const admin = adminApi({
    issuer,
    realm: settings.realm,
    signingKeys: keys.signing,
    users,
    allowedOrigins: [...new Set(settings.appRedirectUris.map((u) => new URL(u).origin))],
    enrollmentSync: biometric.enrollmentSync,
    // #28: a removed user's face data goes from the API (where the real face step enrols), their tokens end.
    faceService: biometric.enrollmentSync ? { url: settings.backendUrl, timeoutMs: settings.backendTimeout } : undefined,
    // A removed user's sessions, grants and tokens end, and their passkeys go (a new account never inherits them).
    revokeAccount: async (accountId) => (await FileAdapter.revokeAccount(storeDir, accountId)) + (await passkeyStore.forget(accountId)),
    passkeys: passkeyAdmin({ store: passkeyStore, users, log }),
    log,
  });

  ready = (req, res) => {
    const url = req.url ?? '/';
    const pathname = url.split('?')[0];
    if (admin.handles(pathname)) {
      void admin.handle(req, res);
      return;
    }
    if (pathname === cameraScript && (req.method === 'GET' || req.method === 'HEAD')) {
      res.setHeader('Content-Type', 'text/javascript; charset=utf-8');
      res.setHeader('Cache-Control', 'no-cache');
      res.setHeader('X-Content-Type-Options', 'nosniff');
      res.end(req.method === 'HEAD' ? undefined : CAMERA_SCRIPT);
      return;
    }
    if (pathname === passkeyScript && (req.method === 'GET' || req.method === 'HEAD')) {
      res.setHeader('Content-Type', 'text/javascript; charset=utf-8');
      res.setHeader('Cache-Control', 'no-cache');
      res.setHeader('X-Content-Type-Options', 'nosniff');
      res.end(req.method === 'HEAD' ? undefined : PASSKEY_SCRIPT);
      return;
    }
    if (pathname.startsWith(interactionPrefix)) {
      void interactions(req, res, pathname.slice(interactionPrefix.length));
      return;
    }
    if (mountPath === '' || pathname === mountPath || pathname.startsWith(`${mountPath}/`)) {
      const inner = url.slice(mountPath.length);
      (req as IncomingMessage & { originalUrl?: string }).originalUrl = url;
      req.url = inner.startsWith('/') ? inner : `/${inner}`;
      providerCallback(req, res);
      return;
    }
    json(res, 404, { error: { code: 'not_found', message: `Nothing here; the realm is at ${mountPath}.` } });
  };

  // Expired sessions, codes and tokens leave the disk hourly, not only at start.
  const sweeper = setInterval(() => {
    FileAdapter.sweep(storeDir).catch((err) => log.warn('sweeping expired identity records failed', { error: String(err) }));
  }, 3_600_000);
  sweeper.unref();

  const url = `http://${settings.host.includes(':') ? `[${settings.host}]` : settings.host}:${port}`;
  return {
    url,
    issuer,
    provider,
    users,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        clearInterval(sweeper);
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
