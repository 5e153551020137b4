/**
 * The verdict of the last check in one line: Compliant, Violation (who misses what) or Nobody in view. A live
 * region: a screen reader hears it when the verdict changes (the same words again are not re-announced).
 */
import type { PpeDetectResponse } from '../../../../shared/api/index';
import { bannerText } from '../../lib/ppe-history';

export function SafetyBanner(props: { result: PpeDetectResponse | null; waitingText: string }) {
  const status = () => props.result?.ppe_status ?? 'waiting';
  return (
    <div class={`safety-banner safety-banner-${status()}`} role="status" aria-live="polite" aria-atomic="true" data-testid="safety-banner">
      <span class="safety-banner-icon" aria-hidden="true">
        {status() === 'compliant' ? '✓' : status() === 'violation' ? '!' : '–'}
      </span>
      <span>{props.result ? bannerText(props.result) : props.waitingText}</span>
    </div>
  );
}
