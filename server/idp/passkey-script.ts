/**
 * The script of the passkey pages, served as a static file (`<issuer path>/assets/passkey.js`) so the pages keep a
 * CSP without inline script. Our own few lines of navigator.credentials rather than a library: the page's options
 * (JSON from @simplewebauthn/server, binary fields as base64url) become the ArrayBuffers the browser takes, and the
 * credential goes back as the JSON the server verifies, in the form field `response`. A refusal or a cancel in the
 * browser sends nothing: the button can be pressed again.
 */
export const PASSKEY_SCRIPT = `'use strict';
(() => {
  const root = document.getElementById('passkey');
  if (!root) return;
  const form = root.querySelector('form');
  const field = form.querySelector('input[name=response]');
  const button = form.querySelector('button[type=submit]');
  const status = root.querySelector('[data-status]');
  const say = (text) => { status.textContent = text; };
  const bytes = (b64url) => {
    const b64 = b64url.replace(/-/g, '+').replace(/_/g, '/');
    const raw = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
    return Uint8Array.from(raw, (c) => c.charCodeAt(0)).buffer;
  };
  const b64url = (buffer) => {
    if (!buffer) return undefined;
    let raw = '';
    for (const b of new Uint8Array(buffer)) raw += String.fromCharCode(b);
    return btoa(raw).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
  };
  const options = JSON.parse(root.dataset.options);
  const register = root.dataset.mode === 'register';
  const idList = (list) => (list || []).map((c) => ({ ...c, id: bytes(c.id) }));

  async function ceremony() {
    if (register) {
      const cred = await navigator.credentials.create({
        publicKey: { ...options, challenge: bytes(options.challenge), user: { ...options.user, id: bytes(options.user.id) }, excludeCredentials: idList(options.excludeCredentials) },
      });
      const r = cred.response;
      return {
        id: cred.id, rawId: b64url(cred.rawId), type: cred.type, authenticatorAttachment: cred.authenticatorAttachment || undefined,
        clientExtensionResults: cred.getClientExtensionResults(),
        response: { clientDataJSON: b64url(r.clientDataJSON), attestationObject: b64url(r.attestationObject), transports: r.getTransports ? r.getTransports() : [] },
      };
    }
    const cred = await navigator.credentials.get({
      publicKey: { ...options, challenge: bytes(options.challenge), allowCredentials: idList(options.allowCredentials) },
    });
    const r = cred.response;
    return {
      id: cred.id, rawId: b64url(cred.rawId), type: cred.type, authenticatorAttachment: cred.authenticatorAttachment || undefined,
      clientExtensionResults: cred.getClientExtensionResults(),
      response: { clientDataJSON: b64url(r.clientDataJSON), authenticatorData: b64url(r.authenticatorData), signature: b64url(r.signature), userHandle: b64url(r.userHandle) },
    };
  }

  form.addEventListener('submit', async (event) => {
    if (field.value) return;
    event.preventDefault();
    if (!window.PublicKeyCredential) return say('This browser does not support passkeys.');
    button.disabled = true;
    say(register ? 'Follow your browser to create the passkey...' : 'Follow your browser to use your passkey...');
    try {
      field.value = JSON.stringify(await ceremony());
      say('Checking your passkey...');
      form.submit();
    } catch (err) {
      button.disabled = false;
      say('No passkey was ' + (register ? 'created' : 'used') + ' (' + (err && err.name ? err.name : err) + '). Press the button to try again.');
    }
  });
  say(register ? 'Press the button to create your passkey.' : 'Press the button to use your passkey.');
})();
`;
