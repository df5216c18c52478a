// Bundled by sandbox.test.ts: a workflow that validates packages the way the rail does.
import { HANDOFF_V1, validateHandoff } from '../../../contracts';

export async function validatePackage(pkg: unknown) {
  return validateHandoff(pkg, { accept: [HANDOFF_V1] });
}
