/**
 * A failed analysis on the recognition and objects pages: what went wrong, and that the camera keeps trying. Not
 * titled "Server unreachable": the app's banner says that once for every page.
 */
import { Show } from 'solid-js';
import { Notice } from '../Notice';

export interface AnalysisFailure {
  text: string;
  unreachable: boolean;
}

export function AnalysisError(props: { error: AnalysisFailure; failedTitle: string; live: boolean; hasResult: boolean }) {
  return (
    <Notice kind="error" title={props.error.unreachable ? 'Waiting for the server' : props.failedTitle} testId="analysis-error">
      {props.error.text}
      <Show when={props.live}> {props.hasResult ? 'The last result stays on screen; ' : ''}trying again every 2 seconds.</Show>
    </Notice>
  );
}
