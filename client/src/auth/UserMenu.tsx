/** The header's account part under auth: who is signed in, their roles, and sign-out. Nothing with auth off. */
import { For, Show } from 'solid-js';
import { auth, signOut } from './session';
import './auth.css';

export function UserMenu() {
  return (
    <Show when={auth.enabled() && auth.user()}>
      {(user) => (
        <div class="user-menu" data-testid="user-menu">
          <span class="user-name" data-testid="user-name">
            {user().name}
          </span>
          <ul class="user-roles" aria-label="Roles">
            <For each={user().roles.filter((r) => r.startsWith('biometric-'))}>{(role) => <li>{role}</li>}</For>
          </ul>
          <button type="button" class="secondary small" onClick={() => void signOut()}>
            Sign out
          </button>
        </div>
      )}
    </Show>
  );
}
