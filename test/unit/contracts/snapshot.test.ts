/** Per-hop snapshot addresses (contracts/snapshot.ts): the rail's pure sha256 and the store's agree. */
import { describe, expect, it } from 'vitest';
import { canonicalJson, isSnapshotUri, parseSnapshotUri, snapshotContent, snapshotOf } from '../../../contracts';
import { sha256Hex } from '../../../src/worker/store/content';
import { fixturePackage } from '../rail/helpers';

describe('snapshots', () => {
  const pkg = fixturePackage();

  it("addresses the package's canonical JSON under its job, the same bytes the store addresses", () => {
    const snap = snapshotOf(pkg.job_id, pkg);
    expect(snap.content).toBe(canonicalJson(pkg));
    expect(parseSnapshotUri(snap.uri)).toEqual({ jobId: pkg.job_id, sha: sha256Hex(snap.content) });
    expect(isSnapshotUri(snap.uri)).toBe(true);
  });

  it("leaves the package's own reference out, so carrying it does not change the address", () => {
    const snap = snapshotOf(pkg.job_id, pkg);
    expect(snapshotOf(pkg.job_id, { ...pkg, context_ref: snap.uri })).toEqual(snap);
    expect(snapshotContent({ ...pkg, context_ref: 'x' })).not.toContain('context_ref');
  });

  it('addresses differently what differs (another hop, another job) and alike what is equal in any key order', () => {
    const a = snapshotOf(pkg.job_id, pkg);
    expect(snapshotOf(pkg.job_id, { ...pkg, summary: 'other' }).uri).not.toBe(a.uri);
    expect(snapshotOf('another-job', pkg).uri).not.toBe(a.uri);
    const reordered = Object.fromEntries(Object.entries(pkg).reverse());
    expect(snapshotOf(pkg.job_id, reordered).uri).toBe(a.uri);
  });

  it('addresses what arrived when it is no package at all', () => {
    expect(snapshotOf('j', 'hello').content).toBe('"hello"');
    expect(snapshotOf('j', undefined).content).toBe('null');
  });
});
