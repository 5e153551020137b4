/**
 * Training: name a person, take or pick 3 to 5 photos, save them, train, and see what the model learnt; below,
 * every person with their photos, to check or delete. Photos stay in the browser until saved, so a bad one
 * can be removed first.
 */
import { createEffect, createMemo, createSignal, on, Show } from 'solid-js';
import { BrowserTraining } from '../components/training/BrowserTraining';
import { CaptureTray } from '../components/training/CaptureTray';
import { createCaptures, MAX_BATCH } from '../components/training/captures';
import { LabelManager } from '../components/training/LabelManager';
import { checkName, NameField, nameProblem } from '../components/training/NameField';
import { TrainingCamera } from '../components/training/TrainingCamera';
import { alreadyStored } from '../components/training/stored-counts';
import { TrainPanel } from '../components/training/TrainPanel';
import { Notice } from '../components/Notice';
import { canvasToBlob, fileToCanvas, fitWithin } from '../lib/images';
import { refreshStatus, serverStatus } from '../lib/server-status';
import { syncState } from '../pwa/sync';

/** Phone photos are 12 MP and more; the face detector works on far less, and uploads stay quick. */
const MAX_FILE_SIDE = 1600;

const RECOMMENDED = { min: 3, max: 5 };

export default function Training() {
  const captures = createCaptures();
  const [name, setName] = createSignal('');
  const [nameTried, setNameTried] = createSignal(false);
  const [fileError, setFileError] = createSignal('');
  const [saveMessage, setSaveMessage] = createSignal<{ kind: 'ok' | 'error' | 'warn'; text: string } | null>(null);
  const [labelsVersion, setLabelsVersion] = createSignal(1);
  let nameInput: HTMLInputElement | undefined;
  let fileInput: HTMLInputElement | undefined;

  const known = () => serverStatus.labels()?.details ?? [];
  const counts = createMemo(() => alreadyStored(known(), captures.items));
  const count = () => captures.items.length;
  const unsent = () => captures.unsent().length;
  // Every photo on this page with the name it was (or will be) saved under, for training in this browser.
  const browserSamples = () => {
    const check = checkName(name());
    const current = check?.ok ? check.label : undefined;
    return captures.items.flatMap((x) => {
      const label = x.label ?? current;
      return label ? [{ label, blob: x.blob }] : [];
    });
  };

  const addFromCamera = (blob: Blob) => {
    setSaveMessage(null);
    return captures.add(blob, 'camera');
  };

  const addFiles = async (files: FileList | null) => {
    setFileError('');
    if (!files?.length) return;
    const problems: string[] = [];
    for (const file of Array.from(files)) {
      try {
        // Re-encoded as JPEG, scaled down: HEIC and huge photos then upload as fast as a capture.
        const blob = await canvasToBlob(fitWithin(await fileToCanvas(file), MAX_FILE_SIDE));
        if (!captures.add(blob, 'file')) {
          problems.push(`Only ${MAX_BATCH} photos can wait to be saved at once; ${file.name} was not added.`);
          break;
        }
      } catch (err) {
        problems.push(`${file.name}: ${(err as Error).message}`);
      }
    }
    setFileError(problems.join(' '));
    if (fileInput) fileInput.value = ''; // picking the same file again must fire `change` again
  };

  /** Checks the name first (nothing is sent with a bad one), then uploads every unsaved photo. */
  const save = async (ids?: number[]): Promise<boolean> => {
    setSaveMessage(null);
    const check = checkName(name());
    if (!check?.ok) {
      setNameTried(true);
      setSaveMessage({ kind: 'error', text: `${nameProblem(check)} Nothing was sent.` });
      nameInput?.focus();
      return false;
    }
    const wanted = captures.unsent().filter((x) => !ids || ids.includes(x.id)).length;
    if (wanted === 0) return true;
    const ok = await captures.upload(check.label, ids);
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
      const stored = captures.items.filter((x) => x.status === 'stored' && x.label === check.label).length;
      setSaveMessage({
        kind: 'ok',
        text: `Saved for ${check.label}. ${stored < RECOMMENDED.min ? `Take ${RECOMMENDED.min - stored} more for better results, or train now.` : 'Now train the model.'}`,
      });
    }
    setLabelsVersion((v) => v + 1);
    void refreshStatus(); // the dashboard's counts, and "nothing to train" below
    return ok;
  };

  /** Before training: new photos saved, none still waiting in the offline queue. A reason when it cannot start. */
  const prepareTraining = async (): Promise<string | null> => {
    if (unsent() > 0 && !(await save())) {
      if (!checkName(name())?.ok) return 'Enter the person’s name first: the new photos are saved under it.';
      if (captures.items.some((x) => x.status === 'failed'))
        return 'Some photos could not be saved (see the photos above). Retry or remove them, then train again.';
    }
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
              known={known().map((d) => d.label)}
              counts={counts()}
              showEmptyError={nameTried()}
              ref={(el) => (nameInput = el)}
            />
          </div>

          <div class="card">
            <h2 class="training-step">2. Take photos</h2>
            <TrainingCamera onCapture={addFromCamera} count={count()} onUploadInstead={() => fileInput?.click()} />
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
              <Show when={fileError()}>
                <p class="training-field-error" role="alert">
                  {fileError()}
                </p>
              </Show>
            </div>
          </div>
        </div>

        <div class="training-col">
          <div class="card">
            <h2 class="training-step">
              3. Check and save{' '}
              <span class="training-count" data-testid="capture-count">
                ({count()} {count() === 1 ? 'photo' : 'photos'})
              </span>
            </h2>
            <p class="muted training-guidance" aria-live="polite">
              {guidance()}
            </p>
            <Show when={count() > 0}>
              <CaptureTray captures={captures} onRetry={(id) => void save([id])} />
            </Show>
            <div class="row">
              <button type="button" class="secondary" disabled={unsent() === 0 || captures.busy()} onClick={() => void save()}>
                {captures.busy() ? 'Saving…' : unsent() > 0 ? `Save ${unsent()} ${unsent() === 1 ? 'photo' : 'photos'}` : 'Save photos'}
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
              <BrowserTraining samples={browserSamples} photos={count()} keep={() => (unsent() > 0 ? save() : Promise.resolve(true))} />
            </Show>
          </div>
        </div>
      </div>

      <LabelManager version={labelsVersion()} />
    </section>
  );
}
