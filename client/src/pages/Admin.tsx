/**
 * Administration (`biometric-admin` only, under AUTH_MODE=oidc): the identity provider's users. An administrator
 * creates a user with a temporary password (changed, and the face enrolled, at the user's first sign-in),
 * optionally as an administrator, and removes users. The IdP checks the role again on every call.
 * The audit log of biometric operations is here too, with auth off as well (there is no IdP's users then).
 */
import { createResource, createSignal, For, Show } from 'solid-js';
import type { AdminUser } from '../../../shared/api/idp-admin';
import { adminUsers } from '../auth/admin-users';
import { auth } from '../auth/session';
import { Notice, type NoticeKind } from '../components/Notice';
import { AuditLog } from '../components/admin/AuditLog';

function status(u: AdminUser): string {
  if (u.required_actions.includes('UPDATE_PASSWORD')) return 'temporary password';
  if (!u.enrolled) return 'face not enrolled';
  return 'enrolled';
}

export default function Admin() {
  const [users, { refetch }] = createResource(
    () => (auth.isAdmin() ? true : null),
    () => adminUsers.list(),
  );
  const [username, setUsername] = createSignal('');
  const [password, setPassword] = createSignal('');
  const [makeAdmin, setMakeAdmin] = createSignal(false);
  const [makeDevice, setMakeDevice] = createSignal(false);
  const [busy, setBusy] = createSignal(false);
  const [message, setMessage] = createSignal<{ kind: NoticeKind; text: string } | null>(null);

  const create = async (e: SubmitEvent) => {
    e.preventDefault();
    setBusy(true);
    setMessage(null);
    try {
      const user = await adminUsers.create(username().trim(), password(), makeAdmin(), makeDevice());
      setMessage({
        kind: 'ok',
        text: `${user.username} was created. Give them the temporary password: they choose their own and enrol their face at first sign-in.`,
      });
      setUsername('');
      setPassword('');
      setMakeAdmin(false);
      setMakeDevice(false);
      await refetch();
    } catch (err) {
      setMessage({ kind: 'error', text: err instanceof Error ? err.message : String(err) });
    } finally {
      setBusy(false);
    }
  };

  const remove = async (name: string) => {
    if (!confirm(`Remove the user ${name}? They can no longer sign in.`)) return;
    setMessage(null);
    try {
      await adminUsers.remove(name);
      setMessage({ kind: 'ok', text: `${name} was removed.` });
      await refetch();
    } catch (err) {
      setMessage({ kind: 'error', text: err instanceof Error ? err.message : String(err) });
    }
  };

  return (
    <section>
      <h1>Administration</h1>
      <Show
        when={auth.isAdmin() || !auth.enabled()}
        fallback={
          <Notice kind="warn" title="Administrators only" testId="admin-only">
            This page needs the role biometric-admin.
          </Notice>
        }
      >
        <Show when={auth.enabled()}>
          <Show when={message()}>{(m) => <Notice kind={m().kind}>{m().text}</Notice>}</Show>
          <h2>New user</h2>
          <form class="admin-form" onSubmit={(e) => void create(e)}>
            <label for="new-username">Username</label>
            <input
              id="new-username"
              autocomplete="off"
              required
              pattern="[A-Za-z0-9][A-Za-z0-9._\-]{0,62}"
              title="Letters, digits, '.', '_' or '-'"
              value={username()}
              onInput={(e) => setUsername(e.currentTarget.value)}
            />
            <label for="new-password">Temporary password</label>
            <input
              id="new-password"
              type="password"
              autocomplete="new-password"
              required
              minlength="8"
              value={password()}
              onInput={(e) => setPassword(e.currentTarget.value)}
            />
            <label class="checkbox">
              <input type="checkbox" checked={makeAdmin()} onChange={(e) => setMakeAdmin(e.currentTarget.checked)} /> Administrator
              (biometric-admin)
            </label>
            <label class="checkbox">
              <input type="checkbox" checked={makeDevice()} onChange={(e) => setMakeDevice(e.currentTarget.checked)} /> Kiosk or device
              (biometric-device: downloads the trained models to recognise offline)
            </label>
            <button type="submit" disabled={busy()}>
              {busy() ? 'Creating…' : 'Create user'}
            </button>
          </form>
          <h2>Users</h2>
          <Show when={users.error}>
            <Notice kind="error" title="Cannot list the users">
              {users.error instanceof Error ? users.error.message : String(users.error)}
            </Notice>
          </Show>
          <Show when={users()} fallback={<p role="status">Loading the users…</p>}>
            {(list) => (
              <table class="admin-users" data-testid="admin-users">
                <thead>
                  <tr>
                    <th scope="col">User</th>
                    <th scope="col">Roles</th>
                    <th scope="col">State</th>
                    <th scope="col">
                      <span class="visually-hidden">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  <For each={list()}>
                    {(u) => (
                      <tr data-username={u.username}>
                        <td>{u.username}</td>
                        <td>{u.roles.join(', ')}</td>
                        <td>{status(u)}</td>
                        <td>
                          <Show when={u.username !== auth.user()?.name}>
                            <button type="button" class="secondary small" onClick={() => void remove(u.username)}>
                              Remove
                            </button>
                          </Show>
                        </td>
                      </tr>
                    )}
                  </For>
                </tbody>
              </table>
            )}
          </Show>
        </Show>
        <AuditLog />
      </Show>
    </section>
  );
}
