/**
 * The script of the enrollment and face pages, served as a static file (`<issuer path>/assets/camera.js`) so the
 * pages keep a CSP without inline script. It opens the camera at the size the page names, and:
 * - enrollment (`data-mode="enroll"`): takes pictures one by one with guidance, has the IdP check each (exactly
 *   one face) at `data-check-url`, lets a refused one be retaken, shows progress, and sends 3 to `data-max`;
 * - face (`data-mode="face"`): sends a burst of `data-frames` frames a moment apart.
 * Pictures travel as JPEG data URLs in the step's form (fields `capture` or `frame`).
 */
export const CAMERA_SCRIPT = `'use strict';
(() => {
  const root = document.getElementById('camera');
  if (!root) return;
  const d = root.dataset;
  const video = root.querySelector('video');
  const status = root.querySelector('[data-status]');
  const guide = root.querySelector('[data-guide]');
  const shots = root.querySelector('[data-shots]');
  const take = root.querySelector('[data-take]');
  const form = root.querySelector('form');
  const submit = form.querySelector('button[type=submit]');
  const canvas = document.createElement('canvas');
  const min = Number(d.min || 1);
  const max = Number(d.max || 1);
  const guidance = [
    'Look straight at the camera.',
    'Turn your head a little to the left.',
    'Turn your head a little to the right.',
    'Raise your chin a little.',
    'Look straight at the camera again.',
  ];
  const captures = [];
  const say = (text) => { status.textContent = text; };
  const grab = () => {
    canvas.width = video.videoWidth;
    canvas.height = video.videoHeight;
    canvas.getContext('2d').drawImage(video, 0, 0);
    return canvas.toDataURL('image/jpeg', 0.92);
  };
  const progress = () => {
    const ok = captures.filter((c) => c.ok).length;
    if (guide) guide.textContent = ok < max ? guidance[ok % guidance.length] : 'All pictures taken.';
    if (d.mode === 'enroll') {
      say(ok + ' of ' + min + ' to ' + max + ' pictures accepted' + (ok >= min ? ': you can finish, or take more.' : '.'));
      submit.disabled = ok < min || captures.some((c) => c.pending);
      take.disabled = ok >= max || captures.some((c) => c.pending) || !video.srcObject;
    }
  };
  const fill = (name, values) => {
    for (const old of form.querySelectorAll('input[name="' + name + '"]')) old.remove();
    for (const value of values) {
      const input = document.createElement('input');
      input.type = 'hidden';
      input.name = name;
      input.value = value;
      form.append(input);
    }
  };

  async function check(capture) {
    try {
      const res = await fetch(d.checkUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ capture: capture.data }),
        credentials: 'same-origin',
      });
      const body = await res.json();
      return body.ok ? { ok: true } : { ok: false, reason: body.reason || 'The picture was refused.' };
    } catch {
      return { ok: false, reason: 'The picture could not be checked. Try again.' };
    }
  }

  async function enrollShot() {
    const capture = { data: grab(), pending: true, ok: false };
    captures.push(capture);
    const item = document.createElement('li');
    const img = document.createElement('img');
    img.src = capture.data;
    img.alt = 'Picture ' + captures.length;
    const note = document.createElement('span');
    note.textContent = 'Checking...';
    item.append(img, note);
    shots.append(item);
    progress();
    const verdict = await check(capture);
    capture.pending = false;
    capture.ok = verdict.ok;
    if (verdict.ok) {
      note.textContent = 'Accepted';
      item.dataset.state = 'ok';
    } else {
      // A refused picture is dropped, so the next one takes its place.
      captures.splice(captures.indexOf(capture), 1);
      note.textContent = verdict.reason + ' Take it again.';
      item.dataset.state = 'refused';
      setTimeout(() => item.remove(), 8000);
    }
    progress();
  }

  async function faceBurst(event) {
    // Without a camera the form goes as it is: the IdP denies it with its reason (no frames), never skips it.
    if (!video.srcObject) return;
    event.preventDefault();
    submit.disabled = true;
    const frames = [];
    const count = Number(d.frames || 3);
    for (let i = 0; i < count; i++) {
      frames.push(grab());
      await new Promise((r) => setTimeout(r, 150));
    }
    say('Checking your face...');
    fill('frame', frames);
    form.submit();
  }

  if (d.mode === 'enroll') {
    take.addEventListener('click', () => void enrollShot());
    form.addEventListener('submit', () => fill('capture', captures.filter((c) => c.ok).map((c) => c.data)));
  } else {
    form.addEventListener('submit', (e) => void faceBurst(e));
  }
  if (d.mode === 'enroll') submit.disabled = true;
  say('Opening the camera...');
  navigator.mediaDevices
    .getUserMedia({ video: { width: { ideal: Number(d.width) }, height: { ideal: Number(d.height) }, facingMode: 'user' }, audio: false })
    .then((stream) => {
      video.srcObject = stream;
      return video.play();
    })
    .then(() => {
      if (d.mode === 'enroll') progress();
      else say('Look at the camera, then press the button.');
    })
    .catch((err) => say('The camera could not be opened (' + (err && err.name ? err.name : err) + '). Allow the camera and reload the page.'));
})();
`;
