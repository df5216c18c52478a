/**
 * The project `handrail init` writes depends on protobufjs 8 itself, in the range handrail does:
 * the Temporal SDK's packages and @grpc/proto-loader ask for two majors, and without a direct
 * dependency npm may hoist 7 and give each Temporal package a copy of its own, which breaks
 * `handrail history` and replay (`TypeError: type must be a Type`; seen from an install of the
 * packed tarball with plain `npm install`). docs/reference.md#requirements says the same.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { codeRoot } from '../../../src/config';

const manifest = (file: string) =>
  JSON.parse(fs.readFileSync(path.join(codeRoot, file), 'utf8')) as { dependencies: Record<string, string> };

it("the init template depends on protobufjs directly, in handrail's own range", () => {
  const own = manifest('package.json').dependencies.protobufjs;
  expect(own).toMatch(/^\^8\./);
  expect(manifest('templates/init/package.json').dependencies.protobufjs).toBe(own);
});
