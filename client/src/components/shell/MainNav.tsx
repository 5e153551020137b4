/**
 * The header's navigation. On a wide screen every page's link is in the header; on a phone (760 px and less,
 * phone.css) the links wrapped to two or three rows and the header's height changed from page to page, so they
 * sit in a panel under a Menu button instead: a disclosure (aria-expanded, aria-controls) that opens over the
 * page, so the header keeps one height. Escape or a click outside closes it and gives the focus back to the
 * button; following a link closes it (the page's heading then takes the focus, App.tsx). `children` (the account
 * menu under auth) goes in the panel too, so it never widens the phone's header.
 */
import { A, useLocation } from '@solidjs/router';
import { createEffect, createSignal, For, on, onCleanup, type JSX } from 'solid-js';
import './phone.css';

export interface NavLink {
  path: string;
  title: string;
}

export function MainNav(props: { links: readonly NavLink[]; children?: JSX.Element }) {
  const [open, setOpen] = createSignal(false);
  const location = useLocation();
  let button!: HTMLButtonElement;
  let box!: HTMLDivElement;

  const close = (refocus: boolean) => {
    if (!open()) return;
    setOpen(false);
    if (refocus) button.focus();
  };
  // A page shown (a link, Back): the menu has done its job.
  createEffect(
    on(
      () => location.pathname,
      () => close(false),
      { defer: true },
    ),
  );

  const onKey = (e: KeyboardEvent) => {
    if (e.key === 'Escape' && open()) {
      e.preventDefault();
      close(true);
    }
  };
  const onPointer = (e: PointerEvent) => {
    if (open() && !box.contains(e.target as Node)) close(false);
  };
  document.addEventListener('keydown', onKey);
  document.addEventListener('pointerdown', onPointer);
  onCleanup(() => {
    document.removeEventListener('keydown', onKey);
    document.removeEventListener('pointerdown', onPointer);
  });

  const current = () => props.links.find((l) => l.path === location.pathname)?.title;

  return (
    <div class="main-nav" ref={box} data-open={open() ? '' : undefined}>
      <button
        ref={button}
        type="button"
        class="menu-button"
        aria-expanded={open()}
        aria-controls="main-nav-panel"
        data-testid="menu-button"
        onClick={() => setOpen((o) => !o)}
      >
        <span class="menu-icon" aria-hidden="true" />
        Menu
        {/* Which page this is, for a screen reader at the button (the heading says it too, visibly). */}
        <span class="nav-sr-only">{current() ? `, on ${current()}` : ''}</span>
      </button>
      <div class="main-nav-panel" id="main-nav-panel">
        <nav aria-label="Main">
          <ul>
            <For each={props.links}>
              {(p) => (
                <li>
                  {/* `end`: only the exact path is the current page (aria-current="page", styled in styles.css). */}
                  <A href={p.path} end onClick={() => setOpen(false)}>
                    {p.title}
                  </A>
                </li>
              )}
            </For>
          </ul>
        </nav>
        {props.children}
      </div>
    </div>
  );
}
