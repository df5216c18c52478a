/**
 * Reading and writing artifacts for stages. Stored artifacts are content-addressed JSON in the
 * store (`handrail://artifacts/<sha256>`); the job's entry arrives as a `data:` URI and is then
 * stored under its job (`handrail://entries/<job_id>/<sha256>`, contracts/entry.ts). Every
 * read is checked (address, hash, body schema) and fails closed with `ArtifactInvalid`.
 */
import type { z } from 'zod';
import {
  DATA_URI,
  handoffV1,
  LIMITS,
  issueLines,
  parseEntryUri,
  parseSnapshotUri,
  type Artifact,
  type HandoffV1,
} from '../contracts';
import { artifactUri, canonicalJson, parseArtifactUri, sha256Hex } from '../src/worker/store/content';
import type { Store } from '../src/worker/store';
import { stageFailure } from './failures';

export interface ArtifactText {
  mediaType: string;
  text: string;
}

/** The bytes an artifact ref points at, verified against its address and declared hash. */
export async function readArtifactText(store: Store, ref: Artifact): Promise<ArtifactText> {
  const data = DATA_URI.exec(ref.uri);
  if (data) {
    const [, mediaType = '', , base64, payload = ''] = data;
    let text: string;
    try {
      text = base64 ? Buffer.from(payload, 'base64').toString('utf8') : decodeURIComponent(payload);
    } catch {
      throw stageFailure('ArtifactInvalid', `${ref.type}: the data: URI payload does not decode`);
    }
    verifyDeclaredHash(ref, text);
    return { mediaType: mediaType || 'text/plain', text };
  }
  const entry = parseEntryUri(ref.uri);
  const hex = parseArtifactUri(ref.uri) ?? entry?.sha;
  if (!hex) throw stageFailure('ArtifactInvalid', `${ref.type}: unsupported artifact URI ${ref.uri.slice(0, 80)}`);
  if (ref.hash !== undefined && ref.hash !== `sha256:${hex}`) {
    throw stageFailure('ArtifactInvalid', `${ref.type}: declared hash ${ref.hash} does not match its address`);
  }
  const text = await store.getContent(hex);
  if (text === null) throw stageFailure('ArtifactInvalid', `${ref.type}: ${ref.uri} is not in the store`);
  if (sha256Hex(text) !== hex)
    throw stageFailure('ArtifactInvalid', `${ref.type}: stored content does not match its address ${hex}`);
  // A stored entry keeps the bytes, not the data: URI's media type: its reader tells by the text.
  return { mediaType: entry ? 'application/octet-stream' : 'application/json', text };
}

function verifyDeclaredHash(ref: Artifact, text: string): void {
  if (ref.hash !== undefined && ref.hash !== `sha256:${sha256Hex(text)}`) {
    throw stageFailure('ArtifactInvalid', `${ref.type}: content does not match declared hash ${ref.hash}`);
  }
}

/** An artifact's JSON body, validated against the schema for its type. */
export async function readArtifactBody<S extends z.ZodType>(
  store: Store,
  ref: Artifact,
  schema: S,
): Promise<z.infer<S>> {
  const { text } = await readArtifactText(store, ref);
  return parseBody(ref.type, text, schema);
}

function parseBody<S extends z.ZodType>(type: string, text: string, schema: S): z.infer<S> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw stageFailure('ArtifactInvalid', `${type}: body is not JSON`);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issues = issueLines(parsed.error, '/', 5);
    throw stageFailure('ArtifactInvalid', `${type}: body fails its schema (${issues.join('; ')})`, { issues });
  }
  return parsed.data;
}

/** Validates and stores a body; returns the ref the package carries (never the body itself). */
export async function writeArtifact<S extends z.ZodType>(
  store: Store,
  type: string,
  schema: S,
  body: z.input<S>,
): Promise<Artifact> {
  // Our own output failing its schema is a bug in the stage, not bad input: let it surface loudly.
  const valid = schema.parse(body);
  const hex = await store.putContent(canonicalJson(valid));
  return { type, uri: artifactUri(hex), hash: `sha256:${hex}`, schema: type };
}

/** The newest artifact of one of these types on the package, or undefined. */
export function latestArtifact(pkg: Pick<HandoffV1, 'artifacts'>, ...types: string[]): Artifact | undefined {
  for (let i = pkg.artifacts.length - 1; i >= 0; i--) {
    const artifact = pkg.artifacts[i];
    if (artifact && types.includes(artifact.type)) return artifact;
  }
  return undefined;
}

/** Like latestArtifact, but the stage cannot work without it. */
export function requireArtifact(pkg: Pick<HandoffV1, 'artifacts'>, stage: string, ...types: string[]): Artifact {
  const found = latestArtifact(pkg, ...types);
  if (!found)
    throw stageFailure(
      'StageInputInvalid',
      `${stage} needs a ${types.join(' or ')} artifact on the package; none found`,
    );
  return found;
}

/** What jobArtifacts reads of a snapshot, whatever its package version: its artifacts and fold. */
const FoldSnapshot = handoffV1.pick({ artifacts: true, earlier_artifacts: true });

/** Snapshots followed back before a fold chain counts as broken (each fold moved at least one). */
const MAX_FOLDS = LIMITS.hops;

/**
 * Every artifact of the job the package stands for: its entry, then the ones superseded and moved
 * off (`earlier_artifacts`, followed back through the stored snapshots, each checked against its
 * address), oldest first, then those it lists. `latestArtifact` is what a stage works on; this is
 * for a stage that needs the history too, e.g. a revision that must differ from every rejected draft.
 * Each call reads one snapshot per fold: a stage that calls it on every hop of a long loop pays
 * for the loop's length.
 */
export async function jobArtifacts(
  store: Store,
  pkg: Pick<HandoffV1, 'artifacts' | 'earlier_artifacts'>,
): Promise<Artifact[]> {
  const [entry, ...listed] = pkg.artifacts;
  const earlier: Artifact[][] = [];
  let fold = pkg.earlier_artifacts;
  for (let followed = 0; fold; followed++) {
    const before = followed < MAX_FOLDS ? await readFoldSnapshot(store, fold.snapshot) : undefined;
    if (!before)
      throw stageFailure(
        'ArtifactInvalid',
        `the artifacts moved off the package are not readable at ${fold.snapshot.slice(0, 120)}`,
      );
    // Its entry is this package's (maybe before it moved to the store): the newest form stands.
    earlier.unshift(before.artifacts.slice(1));
    fold = before.earlier_artifacts;
  }
  const seen = new Set<string>();
  return [...(entry ? [entry] : []), ...earlier.flat(), ...listed].filter(
    (a) => !seen.has(a.uri) && seen.add(a.uri) !== undefined,
  );
}

/** The package a fold points at, from the store, checked against its address and its shape. */
async function readFoldSnapshot(
  store: Store,
  uri: string,
): Promise<Pick<HandoffV1, 'artifacts' | 'earlier_artifacts'> | undefined> {
  const address = parseSnapshotUri(uri);
  const text = address ? await store.getContent(address.sha) : null;
  if (!address || text === null || sha256Hex(text) !== address.sha) return undefined;
  try {
    const read = FoldSnapshot.safeParse(JSON.parse(text));
    return read.success ? read.data : undefined;
  } catch {
    return undefined;
  }
}
