/**
 * How whoever runs the server sets something up, in the settings' own names (CHAT_ENDPOINT, PPE_ENABLED): behind
 * a disclosure under the plain words everyone reads, and only for those who can change it (an admin under sign-in;
 * anyone with sign-in off, where the person at the page usually runs the server too). A setting's name told a
 * person who only uses the page nothing they could act on.
 */
import type { JSX } from 'solid-js';
import { Show } from 'solid-js';
import { auth } from '../auth/session';

/** Whether this person may see how the server is set up: an admin, or anyone while sign-in is off. */
export function seesSetup(): boolean {
  return !auth.enabled() || auth.isAdmin();
}

export function ForOperators(props: { children: JSX.Element; testId?: string }) {
  return (
    <Show when={seesSetup()}>
      <details class="for-operators" data-testid={props.testId}>
        <summary>For whoever runs this server</summary>
        <p>{props.children}</p>
      </details>
    </Show>
  );
}
