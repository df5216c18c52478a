import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../../src/worker/store';
import { canonicalJson } from '../../../src/worker/store/content';
import { storeBackends } from '../../helpers/store-backends';

const postgres = storeBackends().find((b) => b.name === 'postgres')!;

describe.skipIf(postgres.skip !== null)(
  `the PostgreSQL store when the server cuts its connections${postgres.skip ? ` (skipped: ${postgres.skip})` : ''}`,
  () => {
    it('as a restart does (every backend terminated): the process lives on and the next call gets a new connection', async () => {
      const config = await postgres.freshConfig();
      const store = await openStore(config);
      try {
        // Leaves idle connections in the pool, the ones a restart cuts.
        const address = await store.putContent(canonicalJson({ before: 'restart' }));
        const admin = new pg.Client({ connectionString: config.databaseUrl });
        await admin.connect();
        const { rowCount } = await admin.query(
          'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
        );
        await admin.end();
        expect(rowCount).toBeGreaterThan(0);
        // The pool may hand out a cut connection before it has seen the cut: that call fails, as an
        // activity's would (and is retried); the process must not.
        const read = (attempt: number): Promise<string | null> =>
          store
            .getContent(address)
            .catch((error: unknown) => (attempt === 5 ? Promise.reject(error) : read(attempt + 1)));
        expect(await read(1)).toBe(canonicalJson({ before: 'restart' }));
      } finally {
        await store.close();
      }
    });
  },
);
