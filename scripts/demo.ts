/**
 * `npm run demo`: the captioned tour of Lookout (scripts/demo/tour.ts), against its own Lookout started with an empty
 * data directory beside the project's face detection model server (server/model-server). Options:
 *   --headed        a visible Chromium window, for an audience (needs a display)
 *   --pause <ms>    how long each caption stays after its step (default 2500)
 *   --out <dir>     where the video, screenshots and README.txt go (default demo-output/)
 *   --url <url>     tour a Lookout already running instead of starting one (Grace Hopper is added and trained)
 *   --with-test-doubles  the repo's PPE detector and language-model test doubles (canned answers) behind the server
 * The tour shows only what works where it runs: Chat when the server has a language model (CHAT_ENDPOINT or
 * CHAT_MODEL_PATH in the environment), Safety when it has a PPE detector (PPE_ENABLED=true, PPE_ENDPOINT).
 */
import { DEFAULT_OUT_DIR, runDemo } from './demo/tour.js';

const USAGE = 'Usage: npm run demo -- [--headed] [--pause <ms>] [--out <dir>] [--url <http://host:port>] [--with-test-doubles]';

function parse(argv: string[]): { headed: boolean; testDoubles: boolean; pauseMs?: number; outDir?: string; baseUrl?: string } {
  const opts: { headed: boolean; testDoubles: boolean; pauseMs?: number; outDir?: string; baseUrl?: string } = {
    headed: false,
    testDoubles: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined || v.startsWith('--')) throw new Error(`${arg} needs a value. ${USAGE}`);
      return v;
    };
    if (arg === '--headed') opts.headed = true;
    else if (arg === '--with-test-doubles') opts.testDoubles = true;
    else if (arg === '--pause') {
      const ms = Number(value());
      if (!Number.isInteger(ms) || ms < 0) throw new Error(`--pause takes milliseconds (a whole number of 0 or more). ${USAGE}`);
      opts.pauseMs = ms;
    } else if (arg === '--out') opts.outDir = value();
    else if (arg === '--url') {
      const url = value();
      if (!/^https?:\/\//.test(url)) throw new Error(`--url takes an http(s) address, e.g. http://127.0.0.1:8080. ${USAGE}`);
      opts.baseUrl = url;
    } else if (arg === '--help' || arg === '-h') {
      console.log(USAGE);
      process.exit(0);
    } else throw new Error(`Unknown option ${arg}. ${USAGE}`);
  }
  return opts;
}

try {
  const opts = parse(process.argv.slice(2));
  const result = await runDemo({ ...opts, outDir: opts.outDir ?? DEFAULT_OUT_DIR, log: (line) => console.log(line) });
  console.log(
    `\nDone in ${(result.durationMs / 1000).toFixed(1)} s: ${result.steps.length} steps. Video ${result.video}; screenshots and README.txt in ${result.outDir}.`,
  );
} catch (err) {
  console.error(`Demo failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
}
