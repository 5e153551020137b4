/**
 * `/auth/callback`, where the IdP sends the browser back: once the code is redeemed (session.ts), go back to
 * the page the sign-in started from, replacing the callback in the history (its code is spent).
 */
import { useNavigate } from '@solidjs/router';
import { onMount } from 'solid-js';
import { signedInReturnTo, startAuth } from './session';

export function AuthCallback() {
  const navigate = useNavigate();
  onMount(() => {
    void startAuth().then(() => navigate(signedInReturnTo(), { replace: true }));
  });
  return <p role="status">Signing in…</p>;
}
