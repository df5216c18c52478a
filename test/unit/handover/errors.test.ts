/** Bad input: each refusal is a HandoverError with its code, and nothing is written on the way. */
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Edge } from '../../../contracts';
import { applyHandover, HandoverError, materializeTrace, turnDirFor } from '../../../activities/handover';
import { edge, filesUnder, scratch, state, thrown, workedExample } from './helpers';

const refusal = (run: () => unknown) => thrown(run, HandoverError);

describe('applyHandover refusals', () => {
  it('an unknown strategy name → unknown_strategy, listing the known ones', () => {
    const turnDir = scratch();
    const err = refusal(() =>
      applyHandover(edge('transcript_summarise' as Edge['handover']), workedExample, state(), 'q', turnDir),
    );
    expect(err).toMatchObject({ name: 'HandoverError', code: 'unknown_strategy' });
    expect(err.message).toBe(
      'The handover on edge judge → draft names the unknown strategy "transcript_summarise"; known: history, transcript_prepend, transcript_append, transcript_materialize, or { callable: name }.',
    );
    expect(filesUnder(turnDir)).toEqual([]);
  });

  it('a callable that throws, or returns something other than messages → callable_failed', () => {
    const throws = refusal(() =>
      applyHandover(
        edge(
          { callable: 'boom' },
          {
            callable: () => {
              throw new Error('no such turn');
            },
          },
        ),
        workedExample,
        state(),
        'q',
      ),
    );
    expect(throws).toMatchObject({
      code: 'callable_failed',
      message: 'The handover callable "boom" on edge judge → draft threw: no such turn.',
    });
    const wrong = refusal(() =>
      applyHandover(
        edge({ callable: 'wrong' }, { callable: () => 'not messages' as never }),
        workedExample,
        state(),
        'q',
      ),
    );
    expect(wrong).toMatchObject({
      code: 'callable_failed',
      message: expect.stringMatching(
        /^The handover callable "wrong" on edge judge → draft did not return a list of messages: /,
      ),
    });
  });

  it('a callable the edge names but nobody resolved → callable_not_registered', () => {
    const err = refusal(() => applyHandover(edge({ callable: 'x' }), workedExample, state(), 'q'));
    expect(err.code).toBe('callable_not_registered');
    expect(err.message).toBe(
      'The handover on edge judge → draft names the callable "x", but no function was resolved for it; register it in the pipeline\'s handovers.',
    );
  });
});

describe('turnDirFor', () => {
  it('creates <root>/<job>/<model>/turn_<N>, sanitising the job and model ids', () => {
    const root = scratch();
    const dir = turnDirFor({ root, job_id: 'job_1', model_id: 'openai/gpt-4o mini', turn: 3 });
    expect(dir).toBe(join(root, 'job_1', 'openai_gpt-4o_mini', 'turn_3'));
    expect(statSync(dir).isDirectory()).toBe(true);
    expect(turnDirFor({ root, job_id: 'job_1', model_id: 'openai/gpt-4o mini', turn: 3 })).toBe(dir);
  });

  it('gives every job, and direct deliveries under a job id, a folder of its own (ids that differ by . and _ too)', () => {
    const root = scratch();
    const dirs = ['a.b', 'a_b', 'direct:a.b'].map((job_id) => turnDirFor({ root, job_id, model_id: 'm', turn: 1 }));
    expect(dirs).toEqual([
      join(root, 'a.b', 'm', 'turn_1'),
      join(root, 'a_b', 'm', 'turn_1'),
      join(root, '_direct_a.b', 'm', 'turn_1'),
    ]);
    expect(refusal(() => turnDirFor({ root, job_id: '../x', model_id: 'm', turn: 1 })).code).toBe('workspace_missing');
  });

  it('a missing root → workspace_missing, and the root is not created', () => {
    const root = join(scratch(), 'nowhere');
    const err = refusal(() => turnDirFor({ root, job_id: 'job_1', model_id: 'm', turn: 0 }));
    expect(err.code).toBe('workspace_missing');
    expect(err.message).toBe(
      `The workspace root ${root} does not exist; create it or fix the configured root (handrail does not create it).`,
    );
    expect(existsSync(root)).toBe(false);
  });

  it('a root that is a regular file → workspace_missing', () => {
    const root = join(scratch(), 'file');
    writeFileSync(root, 'not a dir');
    const err = refusal(() => turnDirFor({ root, job_id: 'job_1', model_id: 'm', turn: 0 }));
    expect(err.code).toBe('workspace_missing');
    expect(err.message).toContain(`${root} is not a directory`);
  });
});

describe('trace_write_failed', () => {
  it('a traceDir that is a regular file: names the path and the OS error, writes nothing', () => {
    const dir = scratch();
    const traceDir = join(dir, 'turn_0');
    writeFileSync(traceDir, 'not a dir');
    const err = refusal(() => materializeTrace(workedExample, { traceDir, questionId: 'q', turn: 0 }));
    expect(err.code).toBe('trace_write_failed');
    expect(err.message).toMatch(
      new RegExp(`^The handover trace could not be written at ${join(traceDir, 'traces')}: ENOTDIR: not a directory`),
    );
    expect(filesUnder(dir)).toEqual(['turn_0']);
  });

  it('a trace path taken by a directory: the trace file is named, nothing else is written', () => {
    const turnDir = scratch();
    const err = refusal(() => {
      mkdirSync(join(turnDir, 'traces', 'q_turn0_trace.txt'), { recursive: true });
      materializeTrace(workedExample, { traceDir: turnDir, questionId: 'q', turn: 0 });
    });
    expect(err.code).toBe('trace_write_failed');
    expect(err.message).toMatch(
      new RegExp(`^The handover trace could not be written at ${join(turnDir, 'traces', 'q_turn0_trace.txt')}: EISDIR`),
    );
    expect(filesUnder(turnDir)).toEqual([]);
  });

  it('reaches applyHandover callers as the same HandoverError', () => {
    const turnDir = join(scratch(), 'file');
    writeFileSync(turnDir, '');
    expect(
      refusal(() => applyHandover(edge('transcript_materialize'), workedExample, state(), 'q', turnDir)).code,
    ).toBe('trace_write_failed');
  });
});
