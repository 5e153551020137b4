/**
 * Once per test run: a PostgreSQL server for the tests that run the database code against PostgreSQL as well as
 * the embedded PGlite (test/helpers/databases.ts). Its URL reaches the test files through `inject('postgresUrl')`.
 */
import type { TestProject } from 'vitest/node';
import { startPostgresCluster } from './helpers/postgres-cluster.js';

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string;
  }
}

export default async function setup(project: TestProject) {
  const cluster = await startPostgresCluster();
  project.provide('postgresUrl', cluster.url);
  return () => cluster.stop();
}
