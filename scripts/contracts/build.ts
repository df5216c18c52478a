/**
 * Everything generated from the zod source, as `path → content` (paths relative to the repo
 * root). `generate.ts` writes it; the drift test compares it with what is committed.
 */
import Ajv2020 from 'ajv/dist/2020';
import standaloneCode from 'ajv/dist/standalone';
import addFormats from 'ajv-formats';
import { z } from 'zod';
import * as c from '../../contracts';
import * as tickets from '../../contracts/pipelines/ticket-artifacts';
import { isoTime } from '../../contracts/primitives';
import { artifactExamples, fixtureCases } from './fixtures';

export const SCHEMA_DIR = 'contracts/schema';
export const GENERATED_DIR = 'contracts/generated';
export const FIXTURE_DIR = 'contracts/fixtures';

export const schemaId = (name: string) => `urn:handrail:schema:${name}`;

interface SchemaEntry {
  /** File stem and `$id` suffix: the contract's own name (artifact types keep theirs). */
  name: string;
  /** Export name of the standalone validator and of the TS type it narrows to. */
  exportName: string;
  typeName: string;
  schema: z.ZodType;
  comment?: string;
  /** Where validators.d.ts imports the type from (relative to contracts/generated); the
   * contracts' own index unless set. */
  typesFrom?: string;
}

const TICKET_TYPES = '../pipelines/ticket-artifacts';

const SIZE_CAP_COMMENT =
  `Also reject a package whose compact JSON encoding exceeds ${c.LIMITS.packageBytes} UTF-8 bytes, ` +
  'unknown fields included: JSON Schema cannot express a total-size cap.';

export const SCHEMAS: readonly SchemaEntry[] = [
  {
    name: c.HANDOFF_V1,
    exportName: 'handoffV1',
    typeName: 'HandoffV1',
    schema: c.handoffV1,
    comment: SIZE_CAP_COMMENT,
  },
  {
    name: c.HANDOFF_V2,
    exportName: 'handoffV2',
    typeName: 'HandoffV2',
    schema: c.handoffV2,
    comment: SIZE_CAP_COMMENT,
  },
  { name: 'artifact', exportName: 'artifact', typeName: 'Artifact', schema: c.Artifact },
  { name: 'ack_record', exportName: 'ackRecord', typeName: 'AckRecord', schema: c.AckRecord },
  {
    name: 'ticket.raw',
    exportName: 'ticketRaw',
    typeName: 'TicketRaw',
    schema: tickets.TicketRaw,
    typesFrom: TICKET_TYPES,
  },
  {
    name: 'intake.v1',
    exportName: 'intakeV1',
    typeName: 'IntakeV1',
    schema: tickets.IntakeV1,
    typesFrom: TICKET_TYPES,
  },
  {
    name: 'chunks.v1',
    exportName: 'chunksV1',
    typeName: 'ChunksV1',
    schema: tickets.ChunksV1,
    typesFrom: TICKET_TYPES,
  },
  { name: 'no_hit.v1', exportName: 'noHitV1', typeName: 'NoHitV1', schema: tickets.NoHitV1, typesFrom: TICKET_TYPES },
  { name: 'summary_md', exportName: 'summaryMd', typeName: 'SummaryMd', schema: c.SummaryMd },
  { name: 'verdict.v1', exportName: 'verdictV1', typeName: 'VerdictV1', schema: c.VerdictV1 },
  {
    name: 'receipt.v1',
    exportName: 'receiptV1',
    typeName: 'ReceiptV1',
    schema: tickets.ReceiptV1,
    typesFrom: TICKET_TYPES,
  },
  {
    name: 'account_history.v1',
    exportName: 'accountHistoryV1',
    typeName: 'AccountHistoryV1',
    schema: tickets.AccountHistoryV1,
    typesFrom: TICKET_TYPES,
  },
  { name: 'write_receipt', exportName: 'writeReceipt', typeName: 'WriteReceipt', schema: c.WriteReceipt },
  { name: 'merged_branches', exportName: 'mergedBranches', typeName: 'MergedBranches', schema: c.MergedBranches },
  { name: 'job_request', exportName: 'jobRequest', typeName: 'JobRequest', schema: c.JobRequest },
  { name: 'job_result', exportName: 'jobResult', typeName: 'JobResult', schema: c.JobResult },
  { name: 'carried_job', exportName: 'carriedJob', typeName: 'CarriedJob', schema: c.CarriedJob },
  { name: 'human_decision', exportName: 'humanDecision', typeName: 'HumanDecision', schema: c.HumanDecision },
  { name: 'stage_hop_request', exportName: 'stageHopRequest', typeName: 'StageHopRequest', schema: c.StageHopRequest },
  { name: 'handoff_record', exportName: 'handoffRecord', typeName: 'EscalationRecord', schema: c.EscalationRecord },
  {
    name: 'handoff_begin',
    exportName: 'handoffBegin',
    typeName: 'EscalationRecordBeginInput',
    schema: c.EscalationRecordBeginInput,
  },
  {
    name: 'handoff_audit_row',
    exportName: 'handoffAuditRow',
    typeName: 'EscalationRecordAuditRow',
    schema: c.EscalationRecordAuditRow,
  },
  {
    name: 'handoff_list_query',
    exportName: 'handoffListQuery',
    typeName: 'EscalationRecordListQuery',
    schema: c.EscalationRecordListQuery,
  },
];

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

export function jsonSchemaOf(entry: SchemaEntry): Record<string, unknown> {
  const { $schema, ...body } = z.toJSONSchema(entry.schema, { target: 'draft-2020-12' });
  return {
    $schema,
    $id: schemaId(entry.name),
    title: entry.typeName,
    ...(entry.comment ? { $comment: entry.comment } : {}),
    ...body,
  };
}

/** The pattern zod gives `isoTime` (contracts/primitives.ts), the contracts' one date-time. */
export const ISO_TIME_PATTERN = (z.toJSONSchema(isoTime) as { pattern: string }).pattern;

/**
 * The ajv instance every consumer-side check uses: 2020 dialect, strict, formats. `date-time`
 * passes as its pattern decides: isoTime's pattern already checks all that ajv-formats' date-time
 * does (calendar days, leap years, hours, offsets), and checking both cost about a tenth of a
 * package check. `assertPatternedDateTimes` keeps every date-time under that pattern.
 */
export function createAjv(options: { standalone: boolean }) {
  const ajv = new Ajv2020({ strict: true, allErrors: true, code: { source: options.standalone } });
  addFormats(ajv);
  ajv.addFormat('date-time', true);
  return ajv;
}

/** Throws where a schema has a `date-time` without isoTime's pattern: createAjv would not check it. */
export function assertPatternedDateTimes(schema: unknown, path = ''): void {
  if (schema === null || typeof schema !== 'object') return;
  const node = schema as Record<string, unknown>;
  if (node.format === 'date-time' && node.pattern !== ISO_TIME_PATTERN) {
    throw new Error(
      `${path || '/'}: a date-time without isoTime's pattern would pass unchecked (createAjv); build it from isoTime`,
    );
  }
  for (const [key, value] of Object.entries(node)) assertPatternedDateTimes(value, `${path}/${key}`);
}

const HEADER = '// Generated by scripts/contracts/generate.ts from the zod schemas in contracts/. Do not edit.\n';

/**
 * ajv counts a string's length in code points (ucs2length, a loop over every character) for each
 * maxLength/minLength check. A string has between length/2 and length code points, so the loop
 * is only needed when `.length` alone cannot decide; the outcome is the same for every string.
 */
export function guardLengthChecks(code: string): string {
  const name = /const (func\d+) = require\("ajv\/dist\/runtime\/ucs2length"\)\.default;/.exec(code)?.[1];
  if (!name) return code;
  let rewritten = 0;
  const out = code.replace(
    new RegExp(`${name}\\((\\w+)\\) ([<>]) (\\d+)`, 'g'),
    (_, data: string, op: string, limit: string) => {
      rewritten++;
      return op === '>'
        ? `(${data}.length > ${limit} && ${name}(${data}) > ${limit})`
        : `(${data}.length < ${limit} || (${data}.length < ${2 * Number(limit)} && ${name}(${data}) < ${limit}))`;
    },
  );
  const calls = code.split(`${name}(`).length - 1;
  if (rewritten !== calls)
    throw new Error(`guardLengthChecks: rewrote ${rewritten} of ${calls} ${name}() calls; ajv's output changed shape`);
  return out;
}

/**
 * ajv's validators report through a property of their own (`validate.errors = …`), which throws
 * once the object is frozen — and the SDK freezes a workflow bundle's shared modules
 * (src/worker/bundle.ts). An accessor still sets on a frozen function, so each exported validator
 * keeps its last errors in a closure instead. A run reads them right after its own call, in the
 * same synchronous step, so no run sees another's.
 */
const FREEZE_SAFE_ERRORS = `;for(const v of Object.values(exports)){let last=null;Object.defineProperty(v,"errors",{get(){return last;},set(e){last=e;},enumerable:false});}\n`;

function validatorsModule(schemas: Record<string, unknown>[]): { js: string; dts: string } {
  const ajv = createAjv({ standalone: true });
  for (const schema of schemas) ajv.addSchema(schema);
  const refs = Object.fromEntries(SCHEMAS.map((e) => [e.exportName, schemaId(e.name)]));
  const js = HEADER + guardLengthChecks(standaloneCode(ajv, refs)) + FREEZE_SAFE_ERRORS;
  const dts = [
    HEADER.trimEnd(),
    "import type { ErrorObject } from 'ajv';",
    ...[...new Set(SCHEMAS.map((e) => e.typesFrom ?? '../index'))].map(
      (from) =>
        `import type { ${SCHEMAS.filter((e) => (e.typesFrom ?? '../index') === from)
          .map((e) => e.typeName)
          .join(', ')} } from '${from}';`,
    ),
    '',
    '/** A precompiled ajv validator; `errors` holds the last failure (ajv allErrors mode). */',
    'export interface StandaloneValidator<T = unknown> {',
    '  (data: unknown): data is T;',
    '  errors?: ErrorObject[] | null;',
    '}',
    '',
    ...SCHEMAS.map((e) => `export declare const ${e.exportName}: StandaloneValidator<${e.typeName}>;`),
    '',
  ].join('\n');
  return { js, dts };
}

export function buildOutputs(): Map<string, string> {
  const out = new Map<string, string>();
  const schemas = SCHEMAS.map(jsonSchemaOf);
  schemas.forEach((schema, i) => assertPatternedDateTimes(schema, SCHEMAS[i]!.name));
  SCHEMAS.forEach((entry, i) => out.set(`${SCHEMA_DIR}/${entry.name}.json`, json(schemas[i])));

  const { js, dts } = validatorsModule(schemas);
  out.set(`${GENERATED_DIR}/validators.js`, js);
  out.set(`${GENERATED_DIR}/validators.d.ts`, dts);

  const cases = fixtureCases();
  for (const { file, body } of cases) out.set(`${FIXTURE_DIR}/${file}`, json(body));
  const artifacts = Object.entries(artifactExamples).map(([type, body]) => {
    const file = `artifact-${type}.json`;
    out.set(`${FIXTURE_DIR}/${file}`, json(body));
    return { file, schema: `${SCHEMA_DIR}/${type}.json` };
  });
  const packages = cases.map(({ body: _body, ...expectation }) => expectation);
  out.set(`${FIXTURE_DIR}/manifest.json`, json({ schema: `${SCHEMA_DIR}/${c.HANDOFF_V1}.json`, packages, artifacts }));
  return out;
}
