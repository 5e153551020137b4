/**
 * The tour's captions: a box injected into the page under test, fixed at the bottom right, white on black with a yellow
 * edge (high contrast for a projector), `role="status"` so a screen reader reads each new caption. It never takes
 * clicks (`pointer-events: none`), so the tour's own clicks go through it.
 */
import type { Page } from '@playwright/test';

export const CAPTION_ID = 'lookout-demo-caption';

/** Shows `text` (under a small "Step n of m" line) until the next caption; a page load removes it. */
export async function showCaption(page: Page, heading: string, text: string): Promise<void> {
  // A string: this project's node code is type-checked without the DOM library.
  await page.evaluate(`(() => {
    let box = document.getElementById(${JSON.stringify(CAPTION_ID)});
    if (!box) {
      box = document.createElement('div');
      box.id = ${JSON.stringify(CAPTION_ID)};
      box.setAttribute('role', 'status');
      box.setAttribute('aria-live', 'polite');
      box.style.cssText = [
        'position: fixed', 'right: 16px', 'bottom: 16px', 'z-index: 2147483647',
        'max-width: min(520px, calc(100vw - 32px))', 'box-sizing: border-box', 'padding: 14px 22px', 'border-radius: 10px',
        'background: #000', 'color: #fff', 'border: 3px solid #ffd400', 'box-shadow: 0 4px 24px rgba(0,0,0,.5)',
        'font: 500 19px/1.35 system-ui, sans-serif', 'pointer-events: none', 'text-align: left',
      ].join(';');
      const head = document.createElement('div');
      head.style.cssText = 'font-size: 15px; font-weight: 700; color: #ffd400; letter-spacing: .04em; text-transform: uppercase';
      const body = document.createElement('div');
      box.append(head, body);
      document.body.append(box);
    }
    box.children[0].textContent = ${JSON.stringify(heading)};
    box.children[1].textContent = ${JSON.stringify(text)};
  })()`);
}

/** The caption on screen now, or null (for the tour's checks). */
export function captionText(page: Page): Promise<string | null> {
  return page.evaluate(`document.getElementById(${JSON.stringify(CAPTION_ID)})?.children[1].textContent ?? null`);
}
