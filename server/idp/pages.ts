/**
 * The sign-in pages, as plain server-rendered HTML forms (no script: they work in any browser and under a strict
 * CSP). Every interpolated value goes through `escapeHtml`.
 */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}

/** Applied to every page: nothing loads from elsewhere, no script, no framing. */
export const PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; frame-ancestors 'none'";

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

/** Placeholder of the required action `biometric-enrollment` (the capture page is not built yet). */
export function enrollmentPage(o: { realm: string; base: string; username: string }): string {
  return page(
    'Enrol your face',
    o.realm,
    `<h1>Enrol your face</h1><p class="note">${escapeHtml(o.username)}, signing in needs your face as a second factor. Enrollment takes 3 to 5 pictures from your camera.</p>
<form method="post" action="${escapeHtml(`${o.base}/biometric-enrollment`)}"><button type="submit">Start enrollment</button></form>${cancel(o.base)}`,
  );
}

/** Placeholder of the face step (the camera page is not built yet). */
export function facePage(o: { realm: string; base: string; username: string }): string {
  return page(
    'Face verification',
    o.realm,
    `<h1>Face verification</h1><p class="note">${escapeHtml(o.username)}, look at the camera to finish signing in.</p>
<form method="post" action="${escapeHtml(`${o.base}/face`)}"><button type="submit">Verify my face</button></form>${cancel(o.base)}`,
  );
}

export function messagePage(o: { realm: string; title: string; message: string }): string {
  return page(o.title, o.realm, `<h1>${escapeHtml(o.title)}</h1><p>${escapeHtml(o.message)}</p>`);
}
