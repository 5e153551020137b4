/**
 * The shipped deployments accept the names the original service's clients use by default (issue #35, "Drop-in
 * without surprises"): its Keycloak extension calls http://neuroface-backend:8080/api, its frontend's nginx proxies
 * /api to neuroface-backend:8080 with `Host: $host`, and its compose file published that frontend on
 * http://localhost:4200. The container image's ENV, the compose example and (in helm-chart.test.ts) the Helm chart
 * carry these names; a server started with the image's environment answers such requests over real HTTP, and the
 * 421/403 of any other name or page say which setting to change.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import YAML from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSettings } from '../../server/config/settings.js';
import { REPO_ROOT, startTestServer, type TestServer } from '../helpers/test-server.js';

/** The original's defaults, from its docker-compose.yml, frontend/nginx.conf and Keycloak extension. */
const ORIGINAL_BACKEND_HOST = 'neuroface-backend';
const ORIGINAL_FRONTEND_ORIGIN = 'http://localhost:4200';

/**
 * The ENV of each stage of the Containerfile, each stage with what it inherits from the stage it is built on.
 * Handles what the file uses: `FROM x AS name`, `ENV K=V K2=V2` with `\` continuations.
 */
function containerfileEnv(text: string): Map<string, Record<string, string>> {
  const lines = text.replace(/\\\n/g, ' ').split('\n');
  const stages = new Map<string, Record<string, string>>();
  let current: Record<string, string> | null = null;
  for (const line of lines) {
    const from = /^FROM\s+(\S+)(?:\s+AS\s+(\S+))?/i.exec(line.trim());
    if (from) {
      current = { ...(stages.get(from[1]) ?? {}) };
      if (from[2]) stages.set(from[2], current);
      continue;
    }
    const env = /^ENV\s+(.*)$/i.exec(line.trim());
    if (env && current) for (const [, key, value] of env[1].matchAll(/(\w+)=("[^"]*"|\S+)/g)) current[key] = value.replace(/^"|"$/g, '');
  }
  return stages;
}

const imageEnv = containerfileEnv(readFileSync(path.join(REPO_ROOT, 'Containerfile'), 'utf8')).get('api')!;
const compose = YAML.parse(readFileSync(path.join(REPO_ROOT, 'deploy/compose/compose.yaml'), 'utf8'));

const list = (text: string | undefined) => (text ?? '').split(',').map((s) => s.trim());

describe('the container image', () => {
  it("answers for the original's backend name and takes writes from its frontend's origin (ENV of the api target)", () => {
    expect(list(imageEnv.ALLOWED_HOSTS)).toEqual(expect.arrayContaining(['localhost', ORIGINAL_BACKEND_HOST]));
    expect(list(imageEnv.ALLOWED_ORIGINS)).toContain(ORIGINAL_FRONTEND_ORIGIN);
    // The server's own parser takes them as they are.
    const settings = loadSettings({ ...imageEnv, DATA_DIR: '/tmp/unused' }, REPO_ROOT);
    expect(settings.allowedHosts).toContain(ORIGINAL_BACKEND_HOST);
    expect(settings.allowedOrigins).toContain(ORIGINAL_FRONTEND_ORIGIN);
  });
});

describe('the compose example (deploy/compose/compose.yaml)', () => {
  const api = compose.services?.lookout;

  it('runs the api image, reachable by the name the original clients use, on port 8080', () => {
    expect(api.build?.target ?? api.image).toMatch(/api|lookout/);
    expect(api.networks.default.aliases).toContain(ORIGINAL_BACKEND_HOST);
    expect(api.ports).toContain('8080:8080');
  });

  it("accepts the service's own name, the original's and its frontend's origin, and the server parses them", () => {
    const env: Record<string, string> = api.environment;
    expect(list(env.ALLOWED_HOSTS)).toEqual(expect.arrayContaining(['localhost', 'lookout', ORIGINAL_BACKEND_HOST]));
    expect(list(env.ALLOWED_ORIGINS)).toContain(ORIGINAL_FRONTEND_ORIGIN);
    const settings = loadSettings({ ...env, DATA_DIR: '/tmp/unused' }, REPO_ROOT);
    expect(settings.allowedHosts).toContain(ORIGINAL_BACKEND_HOST);
  });

  it("publishes the original frontend (a profile) on the origin the defaults accept, proxying to the original's name", () => {
    const frontend = compose.services?.['original-frontend'];
    expect(frontend.profiles).toContain('original');
    expect(frontend.ports).toContain(`${new URL(ORIGINAL_FRONTEND_ORIGIN).port}:8080`);
  });
});

interface Answer {
  status: number;
  json(): any;
}

/** A request with exactly these headers (fetch would replace Host with the URL's). */
function send(url: string, method: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, json: () => JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe("a server with the container image's default environment, over real HTTP", () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer({
      ALLOWED_HOSTS: imageEnv.ALLOWED_HOSTS,
      ALLOWED_ORIGINS: imageEnv.ALLOWED_ORIGINS,
      WORKERS: '1',
      EMBEDDING_ENABLED: 'false',
      OBJECT_DETECTION_ENABLED: 'false',
      CHAT_ENABLED: 'false',
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("answers the Keycloak extension's default URL (Host: neuroface-backend:8080)", async () => {
    const res = await send(`${server.url}/api/ready`, 'GET', { host: `${ORIGINAL_BACKEND_HOST}:8080` });
    expect(res.status).toBe(200);
    expect(res.json().status).toBe('ready');
  });

  it('takes a write from the original frontend behind its nginx (Host: $host, Origin http://localhost:4200)', async () => {
    const headers = { host: 'localhost', origin: ORIGINAL_FRONTEND_ORIGIN, 'content-type': 'application/json' };
    const res = await send(`${server.url}/api/models/detection`, 'PUT', headers, JSON.stringify({ detection_method: 'opencv' }));
    expect(res.status, JSON.stringify(res.json())).toBe(200);
    // Through the same proxy when it sends the backend's name instead.
    const named = await send(`${server.url}/api/train`, 'POST', { ...headers, host: `${ORIGINAL_BACKEND_HOST}:8080` }, '{}');
    expect(named.status).not.toBe(403);
    expect(named.status).not.toBe(421);
  });

  it('says which setting to change, with the refused name, in a 421', async () => {
    const res = await send(`${server.url}/api/ready`, 'GET', { host: 'faces.example.org:8080' });
    expect(res.status).toBe(421);
    const { error, detail } = res.json();
    expect(error.code).toBe('host_not_allowed');
    expect(error.message).toContain('"faces.example.org"');
    expect(error.message).toContain('ALLOWED_HOSTS');
    expect(detail).toBe(error.message);
  });

  it('says which setting to change, with the refused origin, in a 403', async () => {
    const res = await send(
      `${server.url}/api/train`,
      'POST',
      {
        host: 'localhost',
        origin: 'http://localhost:3000',
        'content-type': 'application/json',
      },
      '{}',
    );
    expect(res.status).toBe(403);
    const { error } = res.json();
    expect(error.code).toBe('forbidden_origin');
    expect(error.message).toContain('"http://localhost:3000"');
    expect(error.message).toContain('ALLOWED_ORIGINS');
  });
});
