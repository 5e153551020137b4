/**
 * #36: a caption that quotes the screen says what the screenshot shows. On a live page the figures change under the
 * tour (the camera's frames move, and a face's similarity with them): the last caption once said "71% match" while
 * its screenshot showed 78%, the text read a few frames before the picture was taken. So the text is read, shown
 * and captured, then read again: the capture is kept when both reads agree (the screen did not change across it),
 * else the whole is done again, up to `tries` times.
 */
export interface SameFrame {
  /** The screen's words now (what the caption quotes). */
  read(): Promise<string>;
  /** Puts `text` in the caption. */
  show(text: string): Promise<void>;
  /** Takes the screenshot. */
  capture(): Promise<void>;
}

/** The text of the kept capture, and whether the reads around it agreed (false: the last try, kept as it was). */
export async function captureSameFrame(frame: SameFrame, tries = 8): Promise<{ text: string; agreed: boolean }> {
  let text = '';
  for (let i = 0; i < Math.max(1, tries); i++) {
    text = await frame.read();
    await frame.show(text);
    await frame.capture();
    if ((await frame.read()) === text) return { text, agreed: true };
  }
  return { text, agreed: false };
}
