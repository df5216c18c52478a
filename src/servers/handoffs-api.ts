/**
 * The records HTTP API (its paths say `handoffs`): an owner-scoped view over the store's
 * escalation records. `buildHandoffsApi` returns a Fastify instance that is not listening;
 * `api-main.ts` is the process that runs it (`npm run api`).
 *
 * Every route is one row of ROUTES: its schemas (zod, from contracts/escalation-record.ts) feed
 * both Fastify's validator/serializer and `GET /openapi.json`, so the document cannot drift from
 * what the server checks. Auth is a bearer token (api-users.ts); a record owned by someone else
 * is answered 404, exactly as a missing one, so ids do not leak who owns what.
 */
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors, validatorCompiler } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  ESCALATION_RECORD_LIST_DEFAULT,
  HandoffApiError,
  HandoffApiIdempotencyKey,
  EscalationRecordBeginRequest,
  EscalationRecordDecideRequest,
  EscalationRecordDecideResponse,
  EscalationRecordListParams,
  EscalationRecordListQueryString,
  EscalationRecordListResponse,
  EscalationRecord,
  EscalationRecordParams,
  EscalationRecordTransitionError,
  EscalationRecordTransitionRequest,
  type EscalationRecordState,
  type EscalationRecordRefusalCode,
} from '../../contracts/escalation-record';
import { ServiceError, type Client } from '@temporalio/client';
import { DecisionRefusedError, JobEndedError, JobNotFoundError, decide } from '../operator/client';
import { RAIL_ACTOR } from '../../workflows/rail/escalation-record';
import type { Store } from '../worker/store/types';
import type { ApiUser, ApiUsers } from './api-users';
import { registerJobEvents } from './job-events';
import { JOB_PAGE_PUBLIC_ROUTES, registerJobPage } from './job-page';

/** Large enough for every valid begin body (8,000-character summary, 2 × 64 items of 500, even
 * if every character is JSON-escaped), small enough that nobody streams megabytes at the store. */
export const HANDOFFS_API_BODY_LIMIT = 512 * 1024;

export interface HandoffsApiOptions {
  store: Store;
  /** Where `decide` sends the job's update (the workspace's namespace). */
  temporal: Client;
  users: ApiUsers;
  /** What the server serves: workspace (Temporal namespace) → projects (pipeline names). Any
   * other workspace or project is 404. */
  workspaces: Record<string, readonly string[]>;
  bodyLimit?: number;
  logger?: boolean;
}

/** Status per store refusal. `illegal_transition` (the record is already final) is 409, like a
 * conflict: the request was well-formed, the record's state refuses it. */
export const REFUSAL_STATUS: Record<EscalationRecordRefusalCode, number> = {
  not_found: 404,
  conflict: 409,
  illegal_transition: 409,
  key_reused: 422,
};

/** A refusal the API itself makes (auth, idempotency header, unknown workspace...). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

type Handler = (request: FastifyRequest, reply: FastifyReply, user: ApiUser | null) => Promise<unknown>;

interface RouteSpec {
  method: 'GET' | 'POST';
  /** Fastify syntax (`:param`). */
  url: string;
  operationId: string;
  summary: string;
  /** No bearer token needed (only the OpenAPI document). */
  public?: boolean;
  /** Takes an `Idempotency-Key` header (required). */
  idempotent?: boolean;
  /** Has `:ws` and `:p`: refused 404 unless the server serves them. */
  scoped?: boolean;
  params?: z.ZodType;
  querystring?: z.ZodType;
  body?: z.ZodType;
  /** The success status and its body. */
  status: number;
  response: z.ZodType;
  /** The error statuses it may answer. */
  errors: number[];
}

const OpenApiDocument = z.record(z.string(), z.unknown());

export const ROUTES: readonly RouteSpec[] = [
  {
    method: 'GET',
    url: '/workspaces/:ws/projects/:p/handoffs',
    operationId: 'listEscalationRecords',
    summary: "A project's handoff records the caller may see, in one state (open by default), newest first.",
    scoped: true,
    params: EscalationRecordListParams,
    querystring: EscalationRecordListQueryString,
    status: 200,
    response: EscalationRecordListResponse,
    errors: [400, 401, 404],
  },
  {
    method: 'POST',
    url: '/workspaces/:ws/projects/:p/handoffs',
    operationId: 'beginEscalationRecord',
    summary:
      'Begin an open handoff record; created_by is the caller. The same Idempotency-Key again returns the same record.',
    scoped: true,
    idempotent: true,
    params: EscalationRecordListParams,
    body: EscalationRecordBeginRequest,
    status: 201,
    response: EscalationRecord,
    errors: [400, 401, 404, 413, 415, 422],
  },
  {
    method: 'GET',
    url: '/handoffs/:id',
    operationId: 'getEscalationRecord',
    summary: 'One handoff record (404 if it is missing or owned by someone else).',
    params: EscalationRecordParams,
    status: 200,
    response: EscalationRecord,
    errors: [400, 401, 404],
  },
  {
    method: 'POST',
    url: '/handoffs/:id/accept',
    operationId: 'acceptEscalationRecord',
    summary:
      'Accept an open record as the caller. Accepting again as the same caller changes nothing; as another, 409.',
    idempotent: true,
    params: EscalationRecordParams,
    body: EscalationRecordTransitionRequest,
    status: 200,
    response: EscalationRecord,
    errors: [400, 401, 404, 409, 413, 415, 422],
  },
  {
    method: 'POST',
    url: '/handoffs/:id/cancel',
    operationId: 'cancelEscalationRecord',
    summary: 'Cancel an open or accepted record as the caller (final).',
    idempotent: true,
    params: EscalationRecordParams,
    body: EscalationRecordTransitionRequest,
    status: 200,
    response: EscalationRecord,
    errors: [400, 401, 404, 409, 413, 415, 422],
  },
  {
    method: 'POST',
    url: '/handoffs/:id/decide',
    operationId: 'decideHandoff',
    summary:
      "Decide the record's escalated job as the caller: the job's `decide` update with the caller as actor (never the body's). The decider takes the record; the job closes it. The same Idempotency-Key again returns the first receipt.",
    idempotent: true,
    params: EscalationRecordParams,
    body: EscalationRecordDecideRequest,
    status: 200,
    response: EscalationRecordDecideResponse,
    errors: [400, 401, 404, 409, 413, 415, 503],
  },
  {
    method: 'GET',
    url: '/openapi.json',
    operationId: 'openapi',
    summary: 'This document (OpenAPI 3.1). No token needed.',
    public: true,
    status: 200,
    response: OpenApiDocument,
    errors: [],
  },
];

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'invalid input: unknown fields, bad values, a malformed id, a missing Idempotency-Key (`issues` lists what failed)',
  401: 'no or unknown bearer token',
  404: 'no such record (or owned by someone else), or an unknown workspace or project',
  409: 'the record refuses the transition: accepted by someone else (`conflict`) or already final (`illegal_transition`); or the job refuses the decision (`decision_refused`, with its reason), or ended before it arrived (`job_ended`)',
  413: 'request body over the limit',
  415: 'body is not application/json',
  422: 'the Idempotency-Key was already used for a different request (`key_reused`)',
  503: 'Temporal did not answer (`temporal_unavailable`)',
};

const jsonSchema = (schema: z.ZodType, io: 'input' | 'output') => {
  const { $schema: _ignored, ...body } = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
  });
  return body as Record<string, unknown>;
};

function parametersOf(schema: z.ZodType | undefined, where: 'path' | 'query') {
  if (!schema) return [];
  const js = jsonSchema(schema, 'input') as { properties?: Record<string, unknown>; required?: string[] };
  return Object.entries(js.properties ?? {}).map(([name, s]) => ({
    name,
    in: where,
    required: where === 'path' || (js.required ?? []).includes(name),
    schema: s,
  }));
}

/** The OpenAPI 3.1 document of ROUTES (3.1's schema dialect is JSON Schema 2020-12, what
 * `z.toJSONSchema` writes). */
export function handoffsOpenApi(routes: readonly RouteSpec[] = ROUTES): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = route.url.replace(/:([A-Za-z_]+)/g, '{$1}');
    const parameters = [
      ...parametersOf(route.params, 'path'),
      ...parametersOf(route.querystring, 'query'),
      ...(route.idempotent
        ? [
            {
              name: 'Idempotency-Key',
              in: 'header',
              required: true,
              description: 'the same key again returns the first result and changes nothing',
              schema: jsonSchema(HandoffApiIdempotencyKey, 'input'),
            },
          ]
        : []),
    ];
    const responses: Record<string, unknown> = {
      [route.status]: {
        description: 'success',
        content: { 'application/json': { schema: jsonSchema(route.response, 'output') } },
      },
    };
    for (const status of route.errors) {
      responses[status] = {
        description: ERROR_DESCRIPTIONS[status] ?? 'error',
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      };
    }
    paths[path] ??= {};
    paths[path][route.method.toLowerCase()] = {
      operationId: route.operationId,
      summary: route.summary,
      security: route.public ? [] : [{ bearer: [] }],
      ...(parameters.length ? { parameters } : {}),
      ...(route.body
        ? {
            requestBody: {
              required: !route.body.safeParse(undefined).success,
              content: { 'application/json': { schema: jsonSchema(route.body, 'input') } },
            },
          }
        : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'handrail handoff records API',
      version: '1',
      description:
        'Durable escalation records (the paths call them handoffs). docs/operate.md "Handoff records HTTP API".',
    },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: { Error: jsonSchema(HandoffApiError, 'output') },
    },
    security: [{ bearer: [] }],
    paths,
  };
}

const visibleTo = (record: EscalationRecord, user: ApiUser) =>
  record.owner === null || user.role === 'root' || record.owner === user.name;

const notFound = (id: string) => new ApiError(404, 'not_found', `no handoff record ${id}`);

/** A record someone else took is theirs to decide, and a cancelled one was given up. A closed one
 * may be this decision, retried: the job answers. */
function refuseTaken(record: EscalationRecord, user: ApiUser): void {
  if (record.state === 'accepted' && record.accepted_by !== user.name) {
    throw new EscalationRecordTransitionError(
      'conflict',
      `handoff record ${record.id} was already accepted by ${record.accepted_by}`,
    );
  }
  if (record.state === 'cancelled')
    throw new EscalationRecordTransitionError(
      'illegal_transition',
      `handoff record ${record.id} was cancelled by ${record.cancelled_by}; nothing to decide`,
    );
}

/** The store key of a caller's Idempotency-Key: per caller, so two users' keys never meet, and
 * never a rail key (`job_id:...`; a job id has no `/`). */
const storeKey = (user: ApiUser, key: string) => `api/${user.name}/${key}`;

function idempotencyKey(request: FastifyRequest): string {
  const raw = request.headers['idempotency-key'];
  if (raw === undefined)
    throw new ApiError(400, 'missing_idempotency_key', 'this request needs an Idempotency-Key header');
  const parsed = HandoffApiIdempotencyKey.safeParse(raw);
  if (!parsed.success)
    throw new ApiError(
      400,
      'invalid_idempotency_key',
      `Idempotency-Key: ${z.prettifyError(parsed.error).replace(/\n/g, ' ')}`,
    );
  return parsed.data;
}

/** The API user a request's `Authorization: Bearer` token names; ApiError 401 otherwise. */
export function bearer(request: FastifyRequest, users: ApiUsers): ApiUser {
  const header = request.headers.authorization;
  if (!header) throw new ApiError(401, 'unauthorized', 'missing Authorization: Bearer <token>');
  const match = /^Bearer +(\S+)$/i.exec(header);
  const user = match ? users.authenticate(match[1]!) : null;
  if (!user) throw new ApiError(401, 'unauthorized', 'unknown bearer token');
  return user;
}

export function buildHandoffsApi(options: HandoffsApiOptions): FastifyInstance {
  const { store, users, workspaces, temporal } = options;
  const app = Fastify({ logger: options.logger ?? false, bodyLimit: options.bodyLimit ?? HANDOFFS_API_BODY_LIMIT });
  app.setValidatorCompiler(validatorCompiler);
  // Responses go through Fastify's own serializer (fast-json-stringify) compiled from the
  // contracts' JSON Schema: it writes only the schema's fields, and re-parsing every record
  // with zod on the way out cost as much as reading it from the store (bench/api).
  // JSON only: any other body type is 415 (Fastify would parse text/plain as a string).
  app.removeAllContentTypeParsers();
  // An empty body is no body (`accept` and `cancel` take "no body, or {}"); Fastify's own parser
  // would refuse it as invalid JSON.
  const json = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body === '') return done(null, undefined);
    return json(request, body as string, done);
  });

  const callers = new WeakMap<FastifyRequest, ApiUser>();
  const caller = (request: FastifyRequest) => {
    const user = callers.get(request);
    if (!user) throw new ApiError(401, 'unauthorized', 'not authenticated');
    return user;
  };
  const serves = (workspace: string, project: string) =>
    Object.hasOwn(workspaces, workspace) && workspaces[workspace]!.includes(project);
  const visibleRecord = async (id: string, user: ApiUser) => {
    const record = await store.getEscalationRecord(id);
    if (!record || !visibleTo(record, user) || !serves(record.workspace, record.project)) throw notFound(id);
    return record;
  };
  const openapi = handoffsOpenApi();
  /** A caller's accept or cancel of a record they may see. */
  const transition = async (
    request: FastifyRequest,
    user: ApiUser,
    move: 'acceptEscalationRecord' | 'cancelEscalationRecord',
  ) => {
    const key = idempotencyKey(request);
    const { id } = await visibleRecord((request.params as z.infer<typeof EscalationRecordParams>).id, user);
    return store[move](id, user.name, storeKey(user, key));
  };

  const handlers: Record<string, Handler> = {
    listEscalationRecords: async (request, _reply, user) => {
      const { ws, p } = request.params as z.infer<typeof EscalationRecordListParams>;
      const query = request.query as z.infer<typeof EscalationRecordListQueryString>;
      const limit = query.limit ?? ESCALATION_RECORD_LIST_DEFAULT;
      const state: EscalationRecordState = query.state ?? 'open';
      // Root sees everything; anyone else unowned records and their own (the store filters).
      const handoffs = await store.listEscalationRecords({
        workspace: ws,
        project: p,
        state,
        limit,
        ...(user!.role === 'root' ? {} : { visible_to: user!.name }),
      });
      return { handoffs };
    },
    beginEscalationRecord: async (request, reply, user) => {
      const key = idempotencyKey(request);
      const { ws, p } = request.params as z.infer<typeof EscalationRecordListParams>;
      const body = request.body as EscalationRecordBeginRequest;
      if (body.owner !== undefined && !users.has(body.owner))
        throw new ApiError(400, 'unknown_owner', `owner ${body.owner} is not an API user`);
      const record = await store.beginEscalationRecord(
        { ...body, workspace: ws, project: p, created_by: user!.name },
        storeKey(user!, key),
      );
      // The store answers a repeated key with the first record; a different request under it is refused.
      const same =
        record.workspace === ws &&
        record.project === p &&
        record.job_id === body.job_id &&
        record.summary === body.summary &&
        record.owner === (body.owner ?? null) &&
        JSON.stringify(record.open_questions) === JSON.stringify(body.open_questions) &&
        JSON.stringify(record.next_steps) === JSON.stringify(body.next_steps);
      if (!same)
        throw new EscalationRecordTransitionError(
          'key_reused',
          `Idempotency-Key ${JSON.stringify(key)} was already used to begin a different handoff record`,
        );
      reply.code(201);
      return record;
    },
    getEscalationRecord: async (request, _reply, user) =>
      visibleRecord((request.params as z.infer<typeof EscalationRecordParams>).id, user!),
    acceptEscalationRecord: (request, _reply, user) => transition(request, user!, 'acceptEscalationRecord'),
    cancelEscalationRecord: (request, _reply, user) => transition(request, user!, 'cancelEscalationRecord'),
    decideHandoff: async (request, _reply, user) => {
      const key = idempotencyKey(request);
      const record = await visibleRecord((request.params as z.infer<typeof EscalationRecordParams>).id, user!);
      // Only the rail's record of an escalation decides a job; one a caller began names any job
      // id they like, so it is refused before Temporal is asked anything: the answer is the same
      // whether that job exists, runs or ended, and whoever owns it.
      if (record.created_by !== RAIL_ACTOR)
        throw new ApiError(
          409,
          'decision_refused',
          `handoff record ${record.id} was not begun by the rail for an escalation; it decides no job`,
        );
      refuseTaken(record, user!);
      // The job lives in the namespace the client talks to: a record of another workspace is not its.
      if (record.workspace !== temporal.options.namespace) {
        throw new ApiError(
          409,
          'decision_refused',
          `this server decides jobs of workspace ${temporal.options.namespace}, not ${record.workspace}`,
        );
      }
      // The record goes with the decision: the job takes it only through the record of the
      // escalation it waits on, so a record someone began for any job id decides nothing.
      const decision = {
        ...(request.body as EscalationRecordDecideRequest),
        actor: user!.name,
        handoff_record: record.id,
      };
      try {
        const receipt = await decide(temporal, record.job_id, decision, { updateId: storeKey(user!, key) });
        return { record: (await store.getEscalationRecord(record.id)) ?? record, decision: receipt };
      } catch (error) {
        if (error instanceof JobEndedError) throw new ApiError(409, 'job_ended', error.message);
        if (error instanceof DecisionRefusedError) {
          // A cancel or another's accept that reached the store first refuses the decision in the
          // job: answered as if it had come before this request.
          const now = await store.getEscalationRecord(record.id);
          if (now) refuseTaken(now, user!);
          throw new ApiError(409, 'decision_refused', error.message);
        }
        if (error instanceof JobNotFoundError)
          throw new ApiError(409, 'decision_refused', `the record's job ${record.job_id} is not in this workspace`);
        if (error instanceof ServiceError)
          throw new ApiError(503, 'temporal_unavailable', `Temporal did not answer: ${error.message}`);
        throw error;
      }
    },
    openapi: async () => openapi,
  };

  // The job page is public too (a static page that asks for the token); its stream is not.
  const publicRoutes = new Set([
    ...ROUTES.filter((r) => r.public).map((r) => `${r.method} ${r.url}`),
    ...JOB_PAGE_PUBLIC_ROUTES,
  ]);
  app.addHook('onRequest', async (request) => {
    if (publicRoutes.has(`${request.method} ${request.routeOptions.url ?? ''}`)) return;
    callers.set(request, bearer(request, users));
  });

  for (const route of ROUTES) {
    const handler = handlers[route.operationId]!;
    app.route({
      method: route.method,
      url: route.url,
      schema: {
        ...(route.params ? { params: route.params } : {}),
        ...(route.querystring ? { querystring: route.querystring } : {}),
        ...(route.body ? { body: route.body } : {}),
        response: { [route.status]: jsonSchema(route.response, 'output') },
      },
      ...(route.scoped
        ? {
            preValidation: async (request: FastifyRequest) => {
              const { ws, p } = request.params as { ws: string; p: string };
              if (!Object.hasOwn(workspaces, ws))
                throw new ApiError(404, 'unknown_workspace', `workspace ${ws} is not served here`);
              if (!serves(ws, p))
                throw new ApiError(404, 'unknown_project', `project ${p} is not a pipeline of workspace ${ws}`);
            },
          }
        : {}),
      handler: async (request, reply) => handler(request, reply, route.public ? null : caller(request)),
    });
  }

  registerJobEvents(app, {
    temporal,
    store,
    caller,
    servesPipeline: (pipeline) => serves(temporal.options.namespace, pipeline),
  });
  registerJobPage(app, { workspaces });

  app.setNotFoundHandler(async (request, reply) => {
    return reply
      .code(404)
      .send({ error: 'not_found', message: `no route ${request.method} ${request.url.split('?')[0]}` });
  });

  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    const send = (status: number, body: HandoffApiError) => {
      if (status === 401) reply.header('www-authenticate', 'Bearer');
      return reply.code(status).send(body);
    };
    if (error instanceof ApiError) return send(error.status, { error: error.code, message: error.message });
    if (error instanceof EscalationRecordTransitionError)
      return send(REFUSAL_STATUS[error.code], { error: error.code, message: error.message });
    if (hasZodFastifySchemaValidationErrors(error)) {
      const where = error.validationContext ?? 'request';
      const issues = error.validation.map((v) => ({
        path: `${where}${v.instancePath}`,
        message: v.message ?? 'invalid',
      }));
      return send(400, {
        error: 'invalid_request',
        message: `invalid ${where}: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
        issues,
      });
    }
    if (error instanceof z.ZodError) {
      const issues = error.issues.map((i) => ({ path: i.path.join('/'), message: i.message }));
      return send(400, { error: 'invalid_request', message: z.prettifyError(error), issues });
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      const names: Record<string, string> = {
        FST_ERR_CTP_BODY_TOO_LARGE: 'body_too_large',
        FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
        FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_json',
        FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_json',
      };
      return send(status, {
        error:
          names[error.code] ??
          (error.code === undefined || error.code === '' ? 'bad_request' : error.code.toLowerCase()),
        message: error.message,
      });
    }
    request.log.error(error);
    return send(500, { error: 'internal', message: 'internal server error' });
  });

  return app;
}
