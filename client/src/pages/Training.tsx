/**
 * Training: name a person, take or pick 3 to 5 photos, save them, train, and see what the model learnt; below,
 * every person with their photos, to check or delete. Photos stay in the browser until saved, so a bad one
 * can be removed first; each is checked when added (no face, several faces: pick one, too small, blurred), and
 * keeps the name it was taken under (another name typed later is for the next photos, never for these).
 */
import { createEffect, createMemo, createSignal, For, on, onMount, Show } from 'solid-js';
import { BrowserTraining } from '../components/training/BrowserTraining';
import { CaptureTray } from '../components/training/CaptureTray';
import { type CaptureItem, createCaptures, MAX_BATCH, type PersonName, shownCheck } from '../components/training/captures';
import '../components/training/training-phone.css';
import { enrollmentSummary, type PhotoVerdict } from '../../../shared/recognition/photo-check';
import { LabelManager } from '../components/training/LabelManager';
import { checkName, NameField, nameProblem } from '../components/training/NameField';
import { TrainingCamera } from '../components/training/TrainingCamera';
import { alreadyStored } from '../components/training/stored-counts';
import { TrainPanel } from '../components/training/TrainPanel';
import { Notice } from '../components/Notice';
import { canvasToBlob, fileToCanvas, fitWithin } from '../lib/images';
import { type PersonSummary, shownName } from '../lib/people';
import { isGood } from '../lib/photo-check';
import { refreshStatus, serverStatus } from '../lib/server-status';
import { syncState } from '../pwa/sync';

/** Phone photos are 12 MP and more; the face detector works on far less, and uploads stay quick. */
const MAX_FILE_SIDE = 1600;

const RECOMMENDED = { min: 3, max: 5 };

/** How many of the latest photos show under the camera (a phone's row of thumbnails). */
const RECENT_SHOWN = 5;

type RecentTone = 'checking' | 'ok' | 'problem';
const recentWords: Record<RecentTone, string> = { checking: 'being checked', ok: 'looks good', problem: 'has a problem, see below' };

/** A photo's check as a thumbnail's border: being checked, good, or a problem to look at in step 3. */
function recentTone(x: CaptureItem): RecentTone {
  if (x.check.state === 'checking') return 'checking';
  if (x.check.state === 'unchecked') return 'ok';
  return isGood(shownCheck(x), !!x.face) && x.status !== 'failed' ? 'ok' : 'problem';
}

/** One person's photos in the tray, for the summary above it. */
interface TrayPerson {
  label: string;
  name: string;
  /** The checks' verdicts of their photos on the server and in the tray (null: not checked). */
  verdicts: (PhotoVerdict | null)[];
  unsent: number;
}

/** The server's summary of someone's stored photos as verdicts, to count the tray's with them. */
function storedVerdicts(detail: PersonSummary | undefined): (PhotoVerdict | null)[] {
  if (!detail) return [];
  const e = detail.enrollment;
  if (!e) return Array<null>(detail.images).fill(null);
  const problems = e.problems ?? Math.max(0, e.photos - e.good - (e.unchecked ?? 0));
  return [
    ...Array<PhotoVerdict>(e.good).fill('ok'),
    ...Array<PhotoVerdict>(problems).fill('blurred'),
    ...Array<null>(Math.max(0, e.photos - e.good - problems)).fill(null),
  ];
}

export default function Training() {
  const captures = createCaptures();
  // Photos checked on an earlier visit but not saved were kept on this device (#36: closing the browser lost them).
  onMount(() => {
    void captures.restore().then((n) => {
      if (n > 0)
        setSaveMessage({
          kind: 'warn',
          text: `${n === 1 ? '1 photo' : `${n} photos`} from before ${n === 1 ? 'was' : 'were'} kept on this device, not saved yet: save or remove ${n === 1 ? 'it' : 'them'}.`,
        });
    });
  });
  const [name, setName] = createSignal('');
  const [nameTried, setNameTried] = createSignal(false);
  const [fileError, setFileError] = createSignal('');
  const [saveMessage, setSaveMessage] = createSignal<{ kind: 'ok' | 'error' | 'warn'; text: string } | null>(null);
  const [labelsVersion, setLabelsVersion] = createSignal(1);
  let nameInput: HTMLInputElement | undefined;
  let fileInput: HTMLInputElement | undefined;

  const known = () => (serverStatus.labels()?.details ?? []) as PersonSummary[];
  const counts = createMemo(() => alreadyStored(known(), captures.items));
  const count = () => captures.items.length;
  const unsent = () => captures.unsent().length;
  const held = () => captures.held().length;
  /** The name in the field, when it is a valid one: new photos are taken for it. */
  const current = (): PersonName | undefined => {
    const check = checkName(name());
    return check?.ok ? { name: name().trim(), label: check.label } : undefined;
  };
  // Every photo on this page with the name it was (or will be) saved under, for training in this browser.
  const browserSamples = () => {
    const label = current()?.label;
    return captures.items.flatMap((x) => {
      const l = x.label ?? label;
      return l ? [{ label: l, blob: x.blob }] : [];
    });
  };

  /** The tray by person, in the order they were first photographed, with the server's photos of them counted in. */
  const trayPeople = createMemo((): TrayPerson[] => {
    const byLabel = new Map<string, TrayPerson>();
    const now = current();
    for (const x of captures.items) {
      const label = x.label ?? now?.label;
      if (!label) continue;
      let p = byLabel.get(label);
      if (!p) {
        const detail = known().find((d) => d.label === label);
        const name = x.name ?? (x.label ? x.label : now!.name);
        // The server's count has the photos stored from this tray already: those are counted once, from there.
        p = { label, name: detail && !x.name ? shownName(detail) : name, verdicts: storedVerdicts(detail), unsent: 0 };
        byLabel.set(label, p);
      }
      if (x.status !== 'stored')
        p.verdicts.push(x.check.state === 'done' ? (isGood(shownCheck(x), !!x.face) ? 'ok' : (shownCheck(x)?.verdict ?? null)) : null);
      if (x.status === 'new' || x.status === 'failed') p.unsent++;
    }
    return [...byLabel.values()];
  });

  /** At the shutter's press: the photo is for the name typed then, even if another is typed while it is made. */
  const addFromCamera = () => {
    const person = current();
    return (blob: Blob) => {
      setSaveMessage(null);
      return captures.add(blob, 'camera', '', person);
    };
  };

  // Files are read one after another (decoded, scaled down, re-encoded: a phone's 12 MP photo takes a moment). Save
  // and both trainings first wait for the files picked before them: pressed while the last photos were still being
  // read, they left those out (the browser model learnt only the first, and the rest were never queued).
  const [adding, setAdding] = createSignal<{ done: number; total: number } | null>(null);
  let filesAdded: Promise<void> = Promise.resolve();
  const addFiles = (files: FileList | null): Promise<void> => {
    const list = files ? Array.from(files) : [];
    // Never a rejected chain: Save and training wait on it, and one failure must not block them until a reload.
    filesAdded = filesAdded
      .then(() => addNow(list))
      .catch((err: unknown) => {
        setFileError(`The photos could not be added: ${err instanceof Error ? err.message : String(err)}`);
      });
    return filesAdded;
  };
  const addNow = async (files: File[]) => {
    setFileError('');
    if (!files.length) return;
    const problems: string[] = [];
    try {
      for (const [i, file] of files.entries()) {
        setAdding({ done: i, total: files.length });
        try {
          // Re-encoded as JPEG, scaled down: HEIC and huge photos then upload as fast as a capture.
          const blob = await canvasToBlob(fitWithin(await fileToCanvas(file), MAX_FILE_SIDE));
          if (!captures.add(blob, 'file', file.name, current())) {
            problems.push(`Only ${MAX_BATCH} photos can wait to be saved at once; ${file.name} was not added.`);
            break;
          }
        } catch (err) {
          problems.push(`${file.name}: ${(err as Error).message}`);
        }
      }
    } finally {
      setAdding(null);
    }
    setFileError(problems.join(' '));
    if (fileInput) fileInput.value = ''; // picking the same file again must fire `change` again
  };

  /**
   * Uploads every unsaved photo under the name it was taken for; photos taken before any name was typed need a
   * valid name in the field (nothing is sent with a bad one). Photos waiting for a decision stay.
   */
  const save = async (ids?: number[]): Promise<boolean> => {
    setSaveMessage(null);
    await filesAdded;
    const wantedItems = captures.unsent().filter((x) => !ids || ids.includes(x.id));
    const person = current();
    if (wantedItems.some((x) => !x.label) && !person) {
      const check = checkName(name());
      setNameTried(true);
      setSaveMessage({ kind: 'error', text: `${nameProblem(check)} Nothing was sent.` });
      nameInput?.focus();
      return false;
    }
    if (wantedItems.length === 0) {
      if (held() > 0) setSaveMessage({ kind: 'warn', text: heldText() });
      return held() === 0;
    }
    const before = new Set(captures.items.filter((x) => x.status === 'stored').map((x) => x.id));
    const ok = await captures.upload(person, ids);
    const failed = captures.items.filter((x) => x.status === 'failed').length;
    const queued = captures.queued().length;
    if (failed > 0) {
      setSaveMessage({
        kind: 'error',
        text: `${failed} ${failed === 1 ? 'photo was' : 'photos were'} not saved. Retry or remove ${failed === 1 ? 'it' : 'them'} below.`,
      });
    } else if (queued > 0) {
      setSaveMessage({
        kind: 'warn',
        text: `The server cannot be reached, so ${queued} ${queued === 1 ? 'photo is' : 'photos are'} kept on this device. Lookout sends ${queued === 1 ? 'it' : 'them'} by itself when the server is back; train after that.`,
      });
    } else {
      const saved = captures.items.filter((x) => x.status === 'stored' && !before.has(x.id));
      const labels = [...new Set(saved.map((x) => x.label!))];
      const people = labels.map((l) => {
        const n = saved.filter((x) => x.label === l).length;
        const typed = saved.find((x) => x.label === l)?.name;
        return `${n} ${n === 1 ? 'photo' : 'photos'} as ${l}${typed && typed !== l ? ` (“${typed}”)` : ''}`;
      });
      setSaveMessage({
        kind: held() > 0 ? 'warn' : 'ok',
        text: `Saved ${people.join(', ')}. Now train the model, or add more photos first.${held() > 0 ? ` ${heldText()}` : ''}`,
      });
    }
    setLabelsVersion((v) => v + 1);
    void refreshStatus(); // the dashboard's counts, and "nothing to train" below
    return ok;
  };

  const heldText = () => {
    const n = held();
    return `${n} ${n === 1 ? 'photo waits' : 'photos wait'} for you: pick the face in a photo with several, and keep or remove a photo with no face.`;
  };

  /** Before training: new photos saved, none still waiting in the offline queue. A reason when it cannot start. */
  const prepareTraining = async (): Promise<string | null> => {
    await filesAdded; // files still being read: they are photos of this training too
    await captures.idle(); // a Save still sending its last photo: the training must include it
    if (unsent() > 0 && !(await save())) {
      if (captures.unsent().some((x) => !x.label) && !current()) return 'Enter the person’s name first: the new photos are saved under it.';
      if (captures.items.some((x) => x.status === 'failed'))
        return 'Some photos could not be saved (see the photos above). Retry or remove them, then train again.';
      if (held() > 0) return `${heldText()} Then train.`;
      // Never train while a new photo is not stored: the model would silently leave it out.
      return 'The new photos are not all saved yet (see the photos above). Train once they are.';
    }
    if (held() > 0) return `${heldText()} Then train.`;
    const queued = captures.queued().length;
    if (queued > 0)
      return `${queued} ${queued === 1 ? 'photo is' : 'photos are'} still waiting to reach the server. Train once ${queued === 1 ? 'it is' : 'they are'} sent.`;
    return null;
  };

  // The offline queue emptied: the photos it kept are on the server now.
  createEffect(
    on(syncState.pendingCaptures, (now, before) => {
      if (now === 0 && (before ?? 0) > 0 && captures.queued().length > 0) {
        captures.markQueuedSent();
        setSaveMessage({ kind: 'ok', text: 'The photos kept on this device have reached the server. Now train the model.' });
        setLabelsVersion((v) => v + 1);
      }
    }),
  );

  const guidance = () => {
    const n = count();
    if (n === 0)
      return `No photos yet. Take ${RECOMMENDED.min} to ${RECOMMENDED.max}: look at the camera, then turn your head a little between photos.`;
    if (n < RECOMMENDED.min)
      return `${n} of ${RECOMMENDED.min} to ${RECOMMENDED.max} recommended. Take ${RECOMMENDED.min - n} more, turning your head a little.`;
    if (n <= RECOMMENDED.max) return `${n} photos: a good number.`;
    return `${n} photos: ${RECOMMENDED.min} to ${RECOMMENDED.max} are usually enough.`;
  };

  return (
    <section class="training-page">
      <h1>Training</h1>
      <p class="muted training-intro">
        Teach Lookout a face: type the person’s name, take {RECOMMENDED.min} to {RECOMMENDED.max} photos of them, save them, then press
        “Train the model”.
      </p>

      <div class="training-grid">
        <div class="training-col">
          <div class="card">
            <h2 class="training-step">1. Who is it?</h2>
            <NameField
              value={name()}
              onInput={(v) => {
                setName(v);
                setSaveMessage(null);
              }}
              onCommit={() => {
                const p = current();
                if (p) captures.adopt(p);
              }}
              known={known().map((d) => shownName(d))}
              counts={counts()}
              showEmptyError={nameTried()}
              ref={(el) => (nameInput = el)}
            />
          </div>

          <div class="card">
            <h2 class="training-step">2. Take photos</h2>
            <TrainingCamera onShutter={addFromCamera} count={count()} onUploadInstead={() => fileInput?.click()} />
            {/* On a phone step 3 is a screen further down: the photos just taken show here too, as the shutter's feedback. */}
            <Show when={count() > 0}>
              <div class="training-recent" data-testid="recent-captures">
                <ul class="training-recent-list" aria-label="Photos just taken">
                  <For each={captures.items.slice(-RECENT_SHOWN)}>
                    {(x) => (
                      <li class={`training-recent-item training-recent-${recentTone(x)}`}>
                        <img src={x.url} alt={`Capture ${captures.items.indexOf(x) + 1}: ${recentWords[recentTone(x)]}`} />
                      </li>
                    )}
                  </For>
                </ul>
                <a class="training-recent-link" href="#training-check">
                  {count()} {count() === 1 ? 'photo' : 'photos'}: check and save
                </a>
              </div>
            </Show>
            <div class="field training-files">
              <label for="training-files">Or add photos from files</label>
              <input
                id="training-files"
                ref={fileInput}
                type="file"
                accept="image/*"
                multiple
                onChange={(e) => void addFiles(e.currentTarget.files)}
              />
              <Show when={adding()}>
                {(a) => (
                  <p class="muted small" role="status" data-testid="files-adding">
                    Adding photo {a().done + 1} of {a().total}…
                  </p>
                )}
              </Show>
              <Show when={fileError()}>
                <p class="training-field-error" role="alert">
                  {fileError()}
                </p>
              </Show>
            </div>
          </div>
        </div>

        <div class="training-col">
          <div class="card" id="training-check">
            <h2 class="training-step">
              3. Check and save{' '}
              <span class="training-count" data-testid="capture-count">
                ({count()} {count() === 1 ? 'photo' : 'photos'})
              </span>
            </h2>
            <p class="muted training-guidance" aria-live="polite">
              {guidance()}
            </p>
            <Show when={trayPeople().length > 0}>
              <ul class="training-tray-people" aria-label="Photos by person" data-testid="tray-people">
                <For each={trayPeople()}>
                  {(p) => (
                    <li data-testid="tray-person" data-label={p.label}>
                      <strong>{p.name}</strong>
                      <Show when={p.name !== p.label}>
                        {' '}
                        <span class="muted">({p.label})</span>
                      </Show>
                      : <span data-testid="tray-person-advice">{enrollmentSummary(p.verdicts).advice}.</span>
                      <Show when={p.unsent > 0 && current() && current()!.label !== p.label}>
                        {' '}
                        <button type="button" class="secondary small" onClick={() => captures.move(p.label, current()!)}>
                          Move {p.unsent === 1 ? 'its unsaved photo' : `its ${p.unsent} unsaved photos`} to {current()!.name}
                        </button>
                      </Show>
                    </li>
                  )}
                </For>
              </ul>
            </Show>
            <Show when={count() > 0}>
              <CaptureTray captures={captures} onRetry={(id) => void save([id])} currentName={current()?.name} />
            </Show>
            <div class="row">
              <button
                type="button"
                class="secondary"
                disabled={(unsent() === 0 && held() === 0) || captures.busy() || adding() !== null}
                onClick={() => void save()}
              >
                {adding()
                  ? 'Adding photos…'
                  : captures.busy()
                    ? 'Saving…'
                    : unsent() > 0
                      ? `Save ${unsent()} ${unsent() === 1 ? 'photo' : 'photos'}`
                      : 'Save photos'}
              </button>
              <Show when={captures.items.some((x) => x.status === 'stored')}>
                <button type="button" class="secondary" onClick={() => captures.clearStored()}>
                  Clear saved photos from this list
                </button>
              </Show>
            </div>
            <Show when={saveMessage()}>
              {(m) => (
                <Notice kind={m().kind} testId="save-message">
                  {m().text}
                </Notice>
              )}
            </Show>
          </div>

          <div class="card">
            <h2 class="training-step">4. Train</h2>
            <TrainPanel
              prepare={prepareTraining}
              unsaved={unsent()}
              nothingToTrain={unsent() === 0 && captures.queued().length === 0 && serverStatus.labels()?.count === 0}
              onFinished={() => setLabelsVersion((v) => v + 1)}
            />
            <Show when={serverStatus.reachable() === false}>
              <BrowserTraining
                samples={browserSamples}
                photos={count()}
                filesAdded={() => filesAdded}
                keep={() => (unsent() > 0 ? save() : Promise.resolve(true))}
              />
            </Show>
          </div>
        </div>
      </div>

      <LabelManager version={labelsVersion()} />
    </section>
  );
}
