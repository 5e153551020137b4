/**
 * "In this browser" or "on the server", per page, with what runs where: the tfjs backend in the browser
 * (WebGPU, WebGL or WASM), loading progress, or why the browser could not run the models (then the server
 * does the work, whatever was chosen before).
 */
import { createEffect, Match, Switch } from 'solid-js';
import { choosePlace, placeFor, type AnalysisPage } from '../../lib/analyze';
import { backendLabel, browserEngine, startBrowserEngine } from '../../lib/browser-engine';

export function EngineChoice(props: { page: AnalysisPage }) {
  const place = () => placeFor(props.page);
  // Load the engine as soon as it is wanted, so the first frame does not wait for the models.
  createEffect(() => {
    if (place() === 'browser') void startBrowserEngine().catch(() => undefined);
  });
  const name = `engine-place-${props.page}`;
  return (
    <fieldset class="engine-choice">
      <legend>Run the models</legend>
      <div class="row">
        <label class="engine-option">
          <input
            type="radio"
            name={name}
            value="browser"
            checked={place() === 'browser'}
            disabled={props.page === 'recognize' && !!browserEngine.modelsRefused()}
            onChange={() => choosePlace(props.page, 'browser')}
          />
          In this browser
        </label>
        <label class="engine-option">
          <input
            type="radio"
            name={name}
            value="server"
            checked={place() === 'server'}
            onChange={() => choosePlace(props.page, 'server')}
          />
          On the server
        </label>
      </div>
      <p class="muted small" data-testid="engine-status" role="status">
        <Switch>
          <Match when={props.page === 'recognize' && browserEngine.modelsRefused()}>
            {(reason) => <span data-testid="models-refused">Each picture is sent to the Lookout server: {reason()}.</span>}
          </Match>
          <Match when={place() === 'server'}>Each picture is sent to the Lookout server.</Match>
          <Match when={browserEngine.state() === 'failed'}>
            The models could not run in this browser ({browserEngine.error()}). Choose “On the server”.
          </Match>
          <Match when={browserEngine.state() === 'ready'}>
            Running in this browser on {backendLabel(browserEngine.info())}: pictures stay on this device.
          </Match>
          <Match when={true}>Loading the models into this browser…</Match>
        </Switch>
      </p>
    </fieldset>
  );
}
