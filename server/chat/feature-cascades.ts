/**
 * The facial-feature cascades of the chat analysis (EYE_CASCADE_FILE, EYEGLASSES_CASCADE_FILE, SMILE_CASCADE_FILE,
 * and PROFILE_CASCADE_FILE for `profile_face`):
 * read once at start and checked by parsing, so a missing or broken file stops the server with the setting's name
 * rather than failing the first chat request. The vision workers get the texts and parse them on first use.
 */
import fs from 'node:fs/promises';
import { parseHaarCascade } from '../../shared/vision/haar-cascade.js';
import type { FeatureCascadeName, FeatureCascadeTexts } from '../../shared/vision/facial-features.js';
import type { Settings } from '../config/settings.js';

const SETTING: Record<FeatureCascadeName, { env: string; key: 'eyeCascadeFile' | 'eyeglassesCascadeFile' | 'smileCascadeFile' }> = {
  eye: { env: 'EYE_CASCADE_FILE', key: 'eyeCascadeFile' },
  eyeglasses: { env: 'EYEGLASSES_CASCADE_FILE', key: 'eyeglassesCascadeFile' },
  smile: { env: 'SMILE_CASCADE_FILE', key: 'smileCascadeFile' },
};

export async function readFeatureCascades(
  settings: Pick<Settings, 'eyeCascadeFile' | 'eyeglassesCascadeFile' | 'smileCascadeFile'>,
): Promise<FeatureCascadeTexts> {
  const read = async (name: FeatureCascadeName): Promise<string> => {
    const { env, key } = SETTING[name];
    const file = settings[key];
    let text: string;
    try {
      text = await fs.readFile(file, 'utf8');
    } catch (err) {
      throw new Error(`${env}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? err})`);
    }
    try {
      parseHaarCascade(text);
    } catch (err) {
      throw new Error(`${env}: ${file} is not a usable Haar cascade (${err instanceof Error ? err.message : String(err)})`);
    }
    return text;
  };
  const [eye, eyeglasses, smile] = await Promise.all([read('eye'), read('eyeglasses'), read('smile')]);
  return { eye, eyeglasses, smile };
}

/** The profile-face cascade (PROFILE_CASCADE_FILE) of `features.profile_face`, read and checked like the others. */
export async function readProfileCascade(settings: Pick<Settings, 'profileCascadeFile'>): Promise<string> {
  const file = settings.profileCascadeFile;
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (err) {
    throw new Error(`PROFILE_CASCADE_FILE: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? err})`);
  }
  try {
    parseHaarCascade(text);
  } catch (err) {
    throw new Error(`PROFILE_CASCADE_FILE: ${file} is not a usable Haar cascade (${err instanceof Error ? err.message : String(err)})`);
  }
  return text;
}
