/**
 * The offline research model a demo or an eval starts sets the worker's model settings while it
 * runs and takes them back when closed, so a second run in the same process starts its own.
 */
import { expect, it } from 'vitest';
import { offlineModelFor } from '../../src/devtools/agent-note';

it('an offline model sets the model settings while it runs and restores them when closed', async () => {
  delete process.env.HANDRAIL_MODEL_BASE_URL;
  process.env.HANDRAIL_MODEL = 'the-caller-s-own';
  const first = await offlineModelFor('research-brief');
  expect(process.env.HANDRAIL_MODEL_BASE_URL).toBe(first!.baseUrl);
  expect(process.env.HANDRAIL_MODEL).toBe('research-offline');
  await first!.close();
  expect(process.env.HANDRAIL_MODEL_BASE_URL).toBeUndefined();
  expect(process.env.HANDRAIL_MODEL).toBe('the-caller-s-own');

  const second = await offlineModelFor('research-brief');
  expect(second, 'a second run starts a model of its own').toBeDefined();
  expect(process.env.HANDRAIL_MODEL_BASE_URL).toBe(second!.baseUrl);
  await second!.close();
  expect(await offlineModelFor('ticket-triage')).toBeUndefined();
});
