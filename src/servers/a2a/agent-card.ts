/**
 * The agent card: one skill per pipeline served. A2A's skill has no field for an input schema, so
 * the card declares an extension whose params give, per skill, the job request the message's data
 * part carries and the pipeline's entry schema (JSON Schema 2020-12).
 */
import type { AgentCard, AgentSkill } from '@a2a-js/sdk';
import { z } from 'zod';
import type { Pipeline } from '../../../contracts';

/** The extension that tells a caller what each skill takes. */
export const HANDRAIL_SKILLS_EXTENSION = 'https://handrail.dev/a2a/extensions/job-request/v1';

/** The A2A protocol version this server speaks (the SDK's). */
export const A2A_VERSION = '1.0';

export const A2A_RPC_PATH = '/a2a';

/** Artifact type → its body's zod schema, for entries a pipeline checks with a precompiled
 * validator (kept out of the workflow bundle): the card shows the schema it was compiled from. */
export type EntrySchemas = Readonly<Record<string, z.ZodType>>;

/** The entry's JSON Schema: from its zod schema (the pipeline's, else `schemas` by entry type); a
 * precompiled validator's own `schema` when it carries one (Ajv's may); else the empty schema
 * (anything: the rail checks the entry when the job starts). */
export function entryJsonSchema(pipeline: Pipeline, schemas: EntrySchemas = {}): Record<string, unknown> {
  const declared = pipeline.entrySpec.schema as unknown;
  const schema = declared instanceof z.ZodType ? declared : (schemas[pipeline.entry] ?? declared);
  if (schema instanceof z.ZodType) {
    const { $schema: _ignored, ...body } = z.toJSONSchema(schema, {
      target: 'draft-2020-12',
      io: 'input',
      unrepresentable: 'any',
    });
    return body as Record<string, unknown>;
  }
  const own = (schema as { schema?: unknown }).schema;
  return typeof own === 'object' && own !== null ? (own as Record<string, unknown>) : {};
}

function skillOf(pipeline: Pipeline): AgentSkill {
  return {
    id: pipeline.name,
    name: pipeline.name,
    description:
      `${pipeline.description} Send one data part: a job request {"pipeline": "${pipeline.name}", "goal", ` +
      `"constraints", "budget": {"usd", "revisions"}, "entry": <a ${pipeline.entry}>}.`,
    tags: ['handrail', pipeline.entry],
    examples: [],
    inputModes: ['application/json'],
    outputModes: ['application/json', 'text/plain'],
    securityRequirements: [],
  };
}

export interface AgentCardOptions {
  pipelines: readonly Pipeline[];
  /** Where callers reach this server (scheme, host, port, no trailing slash). */
  baseUrl: string;
  entrySchemas?: EntrySchemas;
  name?: string;
  version?: string;
}

export function agentCardOf(options: AgentCardOptions): AgentCard {
  const { pipelines, baseUrl } = options;
  return {
    name: options.name ?? 'handrail',
    description:
      'Durable multi-stage jobs on Temporal: each skill is a pipeline. A task is a job; input-required is an escalation waiting for a decision.',
    supportedInterfaces: [
      { url: `${baseUrl}${A2A_RPC_PATH}`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: A2A_VERSION },
    ],
    provider: undefined,
    version: options.version ?? '1',
    capabilities: {
      streaming: true,
      pushNotifications: false,
      extendedAgentCard: false,
      extensions: [
        {
          uri: HANDRAIL_SKILLS_EXTENSION,
          description: "per skill: the job request a message's data part carries, and the pipeline's entry schema",
          required: false,
          params: {
            skills: Object.fromEntries(
              pipelines.map((p) => [
                p.name,
                { entry_type: p.entry, entry_schema: entryJsonSchema(p, options.entrySchemas) },
              ]),
            ),
          },
        },
      ],
    },
    securitySchemes: {
      bearer: {
        scheme: {
          $case: 'httpAuthSecurityScheme',
          value: { scheme: 'Bearer', bearerFormat: '', description: 'an API user token (docs/operate.md)' },
        },
      },
    },
    securityRequirements: [{ schemes: { bearer: { list: [] } } }],
    defaultInputModes: ['application/json'],
    defaultOutputModes: ['application/json', 'text/plain'],
    skills: pipelines.map(skillOf),
    signatures: [],
  };
}
