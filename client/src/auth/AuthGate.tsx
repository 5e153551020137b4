/**
 * What stands between the app and a person under auth: while the config loads, a short wait; with auth on and
 * nobody signed in, the sign-in page (and why the last sign-in failed); otherwise the pages. Off: the pages.
 */
import { type JSX, Match, Switch } from 'solid-js';
import { Notice } from '../components/Notice';
import { auth, signIn } from './session';

export function AuthGate(props: { children: JSX.Element }) {
  return (
    <Switch fallback={props.children}>
      <Match when={auth.config() === null}>
        <p role="status">Loading…</p>
      </Match>
      <Match when={auth.enabled() && !auth.user()}>
        <section class="sign-in" data-testid="sign-in-page">
          <h1>Sign in to Lookout</h1>
          <p>This Lookout asks who you are: sign in with your account, then your face.</p>
          {auth.problem() && (
            <Notice kind="error" title="Not signed in" testId="sign-in-problem">
              {auth.problem()}
            </Notice>
          )}
          <button type="button" onClick={() => void signIn()}>
            Sign in
          </button>
        </section>
      </Match>
    </Switch>
  );
}
