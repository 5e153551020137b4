/**
 * #29: after a switch of the face detection method, the LBPH model still holds faces cropped by the other
 * detector's boxes, and it stops recognising people (measured with the project's model server: 8 of 9 test faces
 * named with the method it was trained with, 2 of 9 with the other). Says so, and offers the retraining that fixes it.
 */
import { createSignal, Show } from 'solid-js';
import type { DetectionMethod, TrainResponse } from '../../../../shared/api/index';
import { api, ApiFailure } from '../../lib/api';
import { Notice } from '../Notice';
import { DETECTION_TEXT } from './descriptions';

export function RetrainHint(props: {
  /** The server says the LBPH model was trained with another method than `active`. */
  needed: boolean;
  trainedWith: DetectionMethod | null;
  active: DetectionMethod;
  /** Called after a retraining finished, to read the configuration again. */
  onRetrained: () => void | Promise<void>;
}) {
  const [running, setRunning] = createSignal(false);
  const [done, setDone] = createSignal<TrainResponse | null>(null);
  const [error, setError] = createSignal('');

  const retrain = async () => {
    setRunning(true);
    setError('');
    setDone(null);
    try {
      setDone(await api.train());
      await props.onRetrained();
    } catch (err) {
      setError(err instanceof ApiFailure ? err.message : String(err));
    } finally {
      setRunning(false);
    }
  };

  const method = (m: DetectionMethod | null) => (m ? DETECTION_TEXT[m].title.toLowerCase() : 'another');

  return (
    <>
      <Show when={props.needed}>
        <Notice kind="warn" title="Retrain for this detection method" testId="retrain-hint">
          <p>
            The LBPH model was trained with {method(props.trainedWith)} face detection, and faces are now found with {method(props.active)}{' '}
            detection. The two draw different boxes around a face, so LBPH may not recognise people until it is trained again on the same
            photos. (The embedding model lines faces up by their features and is not affected.)
          </p>
          <button type="button" disabled={running()} onClick={() => void retrain()} data-testid="retrain-button">
            {running() ? 'Retraining…' : `Retrain with ${method(props.active)} detection`}
          </button>
        </Notice>
      </Show>
      <Show when={done()}>
        {(r) => (
          <Notice kind="ok" testId="retrain-done">
            Retrained with {method(r().detection_method)} detection: {r().total_faces} {r().total_faces === 1 ? 'face' : 'faces'} of{' '}
            {r().total_labels} {r().total_labels === 1 ? 'person' : 'people'}.
          </Notice>
        )}
      </Show>
      <Show when={error()}>
        <Notice kind="error" title="The retraining did not finish" testId="retrain-error">
          {error()}
        </Notice>
      </Show>
    </>
  );
}
