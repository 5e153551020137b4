/**
 * The sign-in pages, as plain server-rendered HTML forms. Only the enrollment and face pages run a script, the
 * static `camera.js` (camera-script.ts) from the IdP itself, so the CSP allows no inline script. Every interpolated
 * value goes through `escapeHtml`.
 */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}

/**
 * Applied to every page: nothing loads from elsewhere, script only from the IdP's own file, no framing. The camera
 * pages show pictures as data URLs and post them back to the IdP (connect-src for the capture check).
 */
export const PAGE_CSP =
  "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; img-src 'self' data:; media-src 'self' mediastream: blob:; base-uri 'none'; frame-ancestors 'none'";

const STYLE = `body{font-family:system-ui,sans-serif;background:#f4f5f7;margin:0;display:grid;place-items:center;min-height:100vh}
main{background:#fff;padding:2rem;border-radius:8px;box-shadow:0 1px 4px #0002;width:min(22rem,90vw)}
h1{font-size:1.3rem;margin-top:0}label{display:block;margin:.8rem 0 .2rem}input{width:100%;padding:.5rem;box-sizing:border-box;font-size:1rem}
button{margin-top:1.2rem;width:100%;padding:.6rem;font-size:1rem;background:#1f5fbf;color:#fff;border:0;border-radius:4px}
.error{color:#a40000;background:#fde8e8;padding:.5rem;border-radius:4px}.note{color:#444}a{color:#1f5fbf}`;

function page(title: string, realm: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)} · ${escapeHtml(realm)}</title><style>${STYLE}</style></head>
<body><main>${body}</main></body></html>
`;
}

const errorBox = (error: string | undefined) => (error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : '');
const cancel = (base: string) => `<p class="note"><a href="${escapeHtml(`${base}/abort`)}">Cancel sign-in</a></p>`;

export function passwordPage(o: { realm: string; base: string; username?: string; error?: string }): string {
  return page(
    'Sign in',
    o.realm,
    `<h1>Sign in to ${escapeHtml(o.realm)}</h1>${errorBox(o.error)}
<form method="post" action="${escapeHtml(`${o.base}/password`)}">
<label for="username">Username</label><input id="username" name="username" autocomplete="username" required value="${escapeHtml(o.username ?? '')}" autofocus>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button></form>${cancel(o.base)}`,
  );
}

export function updatePasswordPage(o: { realm: string; base: string; username: string; error?: string }): string {
  return page(
    'Change your password',
    o.realm,
    `<h1>Change your password</h1><p class="note">${escapeHtml(o.username)}, your password was set by an administrator. Choose your own to continue.</p>${errorBox(o.error)}
<form method="post" action="${escapeHtml(`${o.base}/update-password`)}">
<label for="password-new">New password</label><input id="password-new" name="password-new" type="password" autocomplete="new-password" minlength="8" required autofocus>
<label for="password-confirm">Repeat it</label><input id="password-confirm" name="password-confirm" type="password" autocomplete="new-password" minlength="8" required>
<button type="submit">Change password</button></form>${cancel(o.base)}`,
  );
}

const CAMERA_STYLE = `<style>video{width:100%;background:#000;border-radius:4px;transform:scaleX(-1)}
.shots{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.4rem}.shots li{width:5.5rem;font-size:.75rem}
.shots img{width:100%;border-radius:3px}.shots li[data-state=refused]{color:#a40000}.guide{font-weight:600}
button[disabled]{background:#8aa3c8}</style>`;

export interface CameraPageOptions {
  realm: string;
  base: string;
  /** The issuer's path, under which camera.js is served. */
  mountPath: string;
  username: string;
  width: number;
  height: number;
  error?: string;
}

/** The required action `biometric-enrollment`: pictures from the camera, each checked, then sent together. */
export function enrollmentPage(o: CameraPageOptions & { min: number; max: number; passkeyInstead?: boolean }): string {
  return page(
    'Enrol your face',
    o.realm,
    `${CAMERA_STYLE}<h1>Enrol your face</h1><p class="note">${escapeHtml(o.username)}, signing in needs your face as a second factor. Take ${o.min} to ${o.max} pictures: look at the camera, and turn your head a little between pictures. Each picture must show your face alone.</p>${errorBox(o.error)}
<div id="camera" data-mode="enroll" data-width="${o.width}" data-height="${o.height}" data-min="${o.min}" data-max="${o.max}" data-check-url="${escapeHtml(`${o.base}/check-capture`)}">
<video autoplay muted playsinline width="${o.width}" height="${o.height}"></video>
<p class="guide" data-guide>Look straight at the camera.</p><p class="note" data-status role="status" aria-live="polite">This page needs JavaScript and a camera.</p>
<button type="button" data-take disabled>Take picture</button><ul class="shots" data-shots></ul>
<form method="post" action="${escapeHtml(`${o.base}/biometric-enrollment`)}"><button type="submit" disabled>Finish enrollment</button></form></div>
<script src="${escapeHtml(`${o.mountPath}/assets/camera.js`)}"></script>${o.passkeyInstead ? PASSKEY_STYLE + choice(o.base, 'choose-passkey', 'Or sign in with a passkey instead of your face:', 'Register a passkey instead') : ''}${cancel(o.base)}`,
  );
}

/** The face step: a short burst of camera frames. */
export function facePage(o: CameraPageOptions & { frames: number; offerPasskey?: boolean; passkeyNext?: boolean }): string {
  return page(
    'Face verification',
    o.realm,
    `${CAMERA_STYLE}<h1>Face verification</h1><p class="note">${escapeHtml(o.username)}, look at the camera to finish signing in. Only you may be in the picture.</p>${o.passkeyNext ? '<p class="note">A passkey is required for your account: after this check you register one.</p>' : ''}${errorBox(o.error)}
<div id="camera" data-mode="face" data-width="${o.width}" data-height="${o.height}" data-frames="${o.frames}">
<video autoplay muted playsinline width="${o.width}" height="${o.height}"></video>
<p class="note" data-status role="status" aria-live="polite">This page needs JavaScript and a camera.</p>
<form method="post" action="${escapeHtml(`${o.base}/face`)}">${o.offerPasskey ? `${PASSKEY_STYLE}<label class="check"><input type="checkbox" name="add-passkey" value="1"> Add a passkey after this check</label>` : ''}<button type="submit">Verify my face</button></form></div>
<script src="${escapeHtml(`${o.mountPath}/assets/camera.js`)}"></script>${cancel(o.base)}`,
  );
}

/** A one-button form that switches the second factor (IDP_PASSKEYS=alternative). */
const choice = (base: string, action: string, note: string, button: string) =>
  `<form method="post" action="${escapeHtml(`${base}/${action}`)}"><p class="note">${escapeHtml(note)}</p><button type="submit" class="secondary">${escapeHtml(button)}</button></form>`;

const PASSKEY_STYLE = `<style>button.secondary{background:#fff;color:#1f5fbf;border:1px solid #1f5fbf}label.check{display:flex;gap:.5rem;align-items:center}label.check input{width:auto}</style>`;

export interface PasskeyPageOptions {
  realm: string;
  base: string;
  /** The issuer's path, under which passkey.js is served. */
  mountPath: string;
  username: string;
  /** The WebAuthn options (JSON, challenge inside) the page hands to the browser. */
  options: unknown;
  error?: string;
}

/** The passkey pages' shared part: the ceremony's options, a status line, the button, and the form it fills. */
function passkeyCeremony(o: PasskeyPageOptions, mode: 'register' | 'authenticate', action: string, button: string): string {
  return `<div id="passkey" data-mode="${mode}" data-options="${escapeHtml(JSON.stringify(o.options))}">
<p class="note" data-status role="status" aria-live="polite">This page needs JavaScript and a passkey (this device, a phone or a security key).</p>
<form method="post" action="${escapeHtml(`${o.base}/${action}`)}"><input type="hidden" name="response" value=""><button type="submit">${escapeHtml(button)}</button></form></div>
<script src="${escapeHtml(`${o.mountPath}/assets/passkey.js`)}"></script>`;
}

/** Registering a passkey: at first sign-in (a passkey required or chosen), or after a verified face. */
export function passkeyEnrollmentPage(o: PasskeyPageOptions): string {
  return page(
    'Register a passkey',
    o.realm,
    `${PASSKEY_STYLE}<h1>Register a passkey</h1><p class="note">${escapeHtml(o.username)}, create a passkey for ${escapeHtml(o.realm)} on this device, a phone or a security key. You will use it with your password to sign in.</p>${errorBox(o.error)}
${passkeyCeremony(o, 'register', 'passkey-enrollment', 'Create a passkey')}${cancel(o.base)}`,
  );
}

/** The passkey step; `faceInstead`: the user may take the face step instead (IDP_PASSKEYS=alternative). */
export function passkeyPage(o: PasskeyPageOptions & { faceInstead?: boolean }): string {
  return page(
    'Passkey',
    o.realm,
    `${PASSKEY_STYLE}<h1>Sign in with your passkey</h1><p class="note">${escapeHtml(o.username)}, use your passkey to finish signing in.</p>${errorBox(o.error)}
${passkeyCeremony(o, 'authenticate', 'passkey', 'Use my passkey')}${o.faceInstead ? choice(o.base, 'choose-face', 'Or verify your face instead:', 'Use my face instead') : ''}${cancel(o.base)}`,
  );
}

/**
 * oidc-provider's sign-out question, in these pages' look (its own page has no language, buttons below AA contrast
 * and a web font from elsewhere). `form` is its hidden form (the xsrf token), which both buttons submit.
 */
export function logoutPage(o: { realm: string; form: string }): string {
  return page(
    'Sign out',
    o.realm,
    `<style>button.secondary{background:#fff;color:#1f5fbf;border:1px solid #1f5fbf;margin-top:.6rem}</style>
<h1>Sign out of ${escapeHtml(o.realm)}?</h1>${o.form}
<button autofocus type="submit" form="op.logoutForm" value="yes" name="logout">Yes, sign me out</button>
<button class="secondary" type="submit" form="op.logoutForm">No, stay signed in</button>`,
  );
}

export function messagePage(o: { realm: string; title: string; message: string }): string {
  return page(o.title, o.realm, `<h1>${escapeHtml(o.title)}</h1><p>${escapeHtml(o.message)}</p>`);
}
