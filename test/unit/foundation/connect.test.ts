import { describe, expect, it } from 'vitest';
import { TemporalUnreachableError, connectClient, connectWorker } from '../../../src/connect';
import { freePort } from '../../../src/devtools/devserver/server';

describe('connecting to a server that is not there', () => {
  it('the client fails with a clear error within seconds', async () => {
    const address = `127.0.0.1:${await freePort()}`;
    const started = Date.now();
    const err = await connectClient({ temporalAddress: address, namespace: 'default' }, 2_000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TemporalUnreachableError);
    expect((err as Error).message).toContain(`Cannot reach Temporal at ${address}`);
    expect((err as Error).message).toContain('npm run server');
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('the worker connection fails the same way', async () => {
    const address = `127.0.0.1:${await freePort()}`;
    const err = await connectWorker({ temporalAddress: address, namespace: 'default' }, 2_000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TemporalUnreachableError);
    expect((err as Error).message).toContain(address);
  });
});
