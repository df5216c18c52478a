/**
 * A stage the rail does not trust, served from another language: a Temporal Python worker
 * (fixtures/lying-stage/worker.py, the Python SDK installed by the suite) polls the `retrieve`
 * card's own task queue, where the rail's worker holds no activity. It lies as told — a false
 * duplicate claim, a grown wallet, a changed goal, another job's artifact — and the rail refuses
 * each with nothing recorded and nothing paid beyond the hop's reservation. Honest, it is
 * delivered the same package twice and works once: the rail itself knows the repeat.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { reservationUsd } from '../../contracts/rail';
import { AesGcmCodec } from '../../src/codec';
import { codeRoot } from '../../src/config';
import { bundleRail } from '../../src/worker/bundle';
import {
  afterIntake,
  expectJobRefusesFalseDuplicate,
  expectLieRefused,
  expectRepeatWorkedOnce,
  LIES,
  type Lie,
} from '../helpers/lying-stage';
import { startRail, type Rail } from '../helpers/rail';
import { pythonTemporalio, type PythonSdk } from '../helpers/python-temporalio';
import { PYTHON_RETRIEVE_QUEUE, pythonRetrieve, pythonRetrievePipeline } from './fixtures/lying-stage/pipeline';

const FIXTURE = path.join(codeRoot, 'test', 'integration', 'fixtures', 'lying-stage');
const sdk = pythonTemporalio();
const skip = typeof sdk === 'string' ? sdk : null;
const RESERVATION = reservationUsd(pythonRetrieve);

let rail: Rail;
let liar: ChildProcess | undefined;
/** Where the test tells the Python worker which lie to tell, and reads back what it worked on. */
let control: string;
const tell = (lie: Lie) => fs.writeFileSync(path.join(control, 'lie'), lie);
const worked = (): string[] => fs.readFileSync(path.join(control, 'worked'), 'utf8').split('\n').filter(Boolean);

/** The Python worker on retrieve's queue, resolved once it polls (rejected with its stderr if it exits first). */
function startPythonLiar({ python, pythonPath }: PythonSdk): Promise<ChildProcess> {
  const args = [
    path.join(FIXTURE, 'worker.py'),
    inject('temporalAddress'),
    inject('namespace'),
    PYTHON_RETRIEVE_QUEUE,
    control,
  ];
  const child = spawn(python, args, {
    env: { ...process.env, PYTHONPATH: pythonPath, PYTHONUNBUFFERED: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes(`polling ${PYTHON_RETRIEVE_QUEUE}`)) resolve(child);
    });
    child.once('exit', (code) =>
      reject(new Error(`the Python worker exited (${code}) before polling: ${stderr.trim()}`)),
    );
  });
}

beforeAll(async () => {
  if (skip) return;
  control = fs.mkdtempSync(path.join(os.tmpdir(), 'handrail-py-liar-'));
  tell('honest');
  fs.writeFileSync(path.join(control, 'worked'), '');
  liar = await startPythonLiar(sdk as PythonSdk);
  // The rail's worker registers the reference stages on the job's queue only; the bundle's
  // pipeline sends `retrieve` to its own queue, where only the Python worker answers. Plain JSON
  // payloads (no codec keys), which the Python SDK's default converter reads and writes.
  const workflowBundle = await bundleRail(path.join(FIXTURE, 'workflows.ts'));
  rail = await startRail({ workflowBundle, dataConverter: { payloadCodecs: [new AesGcmCodec(undefined)] } });
});
afterAll(async () => {
  liar?.kill('SIGKILL');
  await rail?.stop();
  if (control) fs.rmSync(control, { recursive: true, force: true });
});

describe.skipIf(skip)(`a lying Python stage through stageHop${skip ? ` (skipped: ${skip})` : ''}`, () => {
  it.each(LIES)(
    '%s is rejected_invariant naming %s; the package goes on as delivered, nothing recorded, nothing paid beyond the reservation',
    async (told, invariant) => {
      tell('honest');
      const pkg = await afterIntake(rail, pythonRetrievePipeline);
      tell(told);
      const key = await expectLieRefused(rail, pkg, invariant, RESERVATION);
      expect(worked()).toContain(key);
    },
  );

  it('honest, the same package delivered twice is worked once: the rail answers the repeat duplicate with the first artifact, free', async () => {
    tell('honest');
    await expectRepeatWorkedOnce(rail, await afterIntake(rail, pythonRetrievePipeline), worked);
  });
});

describe.skipIf(skip)(`a lying Python stage in a job${skip ? ` (skipped: ${skip})` : ''}`, () => {
  it('a false duplicate claim with a rewritten goal and a $999 wallet: the job escalates on rejected_invariant, its goal and wallet as they were, no write', async () => {
    tell('false-duplicate');
    await expectJobRefusesFalseDuplicate(rail, { taskQueue: rail.taskQueue, pipelines: [pythonRetrievePipeline] });
  });
});
