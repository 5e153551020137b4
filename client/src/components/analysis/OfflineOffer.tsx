/**
 * On a page set to analyse "On the server" while the server cannot be reached: the offer to analyse in this browser
 * instead (the same engines run on this device, offline too), rather than a last result that keeps saying it was
 * analysed on a server that is gone.
 */
import { Show } from 'solid-js';
import { choosePlace, placeFor, type AnalysisPage } from '../../lib/analyze';
import { browserEngine } from '../../lib/browser-engine';
import { serverStatus } from '../../lib/server-status';
import { Notice } from '../Notice';

export function OfflineOffer(props: { page: AnalysisPage }) {
  const show = () => serverStatus.reachable() === false && placeFor(props.page) === 'server' && browserEngine.state() !== 'failed';
  return (
    <Show when={show()}>
      <Notice kind="info" testId="offline-offer">
        The server cannot be reached, so pictures are not analysed. This browser can do it on this device instead.{' '}
        <button type="button" class="secondary small" onClick={() => choosePlace(props.page, 'browser')}>
          Analyse in this browser
        </button>
      </Notice>
    </Show>
  );
}
