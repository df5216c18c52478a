/**
 * `handrail` command lines → typed commands. Pure (no I/O), so every usage error is unit-tested.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import {
  AckState,
  ESCALATION_RECORD_STATES,
  HumanDecision,
  JobStatus,
  LastVerdict,
  isSlug,
  type EscalationRecordState,
} from '../../../contracts';
import type { JobFilter } from '../client';
import type { TranscriptFormat } from '../transcript';
import { GateSyntaxError, parseGate, type Gate } from '../../eval/gate';

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export interface StartFlags {
  jobId?: string;
  pipeline?: string;
  goal?: string;
  constraints?: string[];
  budgetUsd?: number;
  revisions?: number;
  maxHops?: number;
  decisionTimeout?: string;
  owner?: string;
}

/** `handrail handoffs …`: the records API's routes, as the token's user. */
export type HandoffsCommand =
  | { name: 'handoffs'; action: 'list'; project?: string; state?: EscalationRecordState; limit?: number; json: boolean }
  | { name: 'handoffs'; action: 'show' | 'accept' | 'cancel'; id: string; json: boolean }
  | { name: 'handoffs'; action: 'decide'; id: string; decision: Record<string, unknown>; json: boolean };

export type Command =
  | { name: 'help'; topic?: string }
  | { name: 'init'; dir: string; handrail?: string }
  | { name: 'start'; ticket: string; flags: StartFlags; follow: boolean; json: boolean }
  | { name: 'status'; jobId: string; json: boolean }
  | { name: 'follow'; jobId: string; from: number; json: boolean }
  | { name: 'list'; filter: Omit<JobFilter, 'taskQueue'>; json: boolean }
  | { name: 'show'; jobId: string; hop?: number; json: boolean }
  | {
      name: 'fork';
      jobId: string;
      fromHop: number;
      packageFile?: string;
      pipeline?: string;
      forkId?: string;
      follow: boolean;
      json: boolean;
    }
  | { name: 'decide'; jobId: string; decision: Record<string, unknown>; follow: boolean; json: boolean }
  | { name: 'cancel'; jobId: string; json: boolean }
  | { name: 'history'; jobId: string; out?: string; json: boolean }
  | { name: 'transcript'; jobId: string; stage?: string; format: TranscriptFormat; json: boolean }
  | HandoffsCommand
  | ServeCommand
  | {
      name: 'replay';
      files: string[];
      jobs: string[];
      query?: string;
      workflows?: string;
      diff: boolean;
      pipelines?: string;
      json: boolean;
    }
  | EvalCommand;

/** The servers `handrail serve` runs (src/servers: the same functions as `npm run a2a|api|codec-server`). */
export const SERVERS = ['a2a', 'api', 'codec'] as const;
export type ServerName = (typeof SERVERS)[number];

/** `handrail serve …`: one server in the foreground until SIGINT/SIGTERM; `plugin` is the module
 * exporting the project's `HandrailPlugin`, whose pipelines it serves (a2a and api only). */
export type ServeCommand = { name: 'serve'; server: ServerName; plugin?: string };

/** `handrail eval …`: score a dataset on the current build, or compare two builds' results. */
export type EvalCommand =
  | {
      name: 'eval';
      action: 'run';
      files: string[];
      query?: string;
      datasets: string[];
      pipelines?: string;
      scorers: string[];
      replay: boolean;
      address?: string;
      concurrency?: number;
      out?: string;
      json: boolean;
    }
  | { name: 'eval'; action: 'compare'; a: string; b: string; gates: Gate[]; html?: string; json: boolean };

export const USAGE: Record<Exclude<Command['name'], 'help'>, string> = {
  init: 'handrail init <dir> [--handrail SPEC]',
  start:
    'handrail start <ticket.json | -> [--job-id ID] [--pipeline NAME] [--goal TEXT] [--constraint TEXT]... [--budget-usd N] [--revisions N] [--max-hops N] [--decision-timeout 1h] [--owner API_USER] [--follow] [--json]',
  status: 'handrail status <job> [--json]',
  follow: 'handrail follow <job> [--from EVENT_ID] [--json]',
  list: 'handrail list [--status running|escalated|completed|rejected|cancelled] [--pipeline NAME] [--stage STAGE] [--ack ACK] [--verdict pass|fail|none] [--limit N] [--json]',
  show: 'handrail show <job> [--hop N] [--json]',
  fork: 'handrail fork <job> --from-hop N [--package edited.json] [--pipeline NAME] [--job-id ID] [--follow] [--json]',
  decide:
    'handrail decide <job> approve|reject|revise|top-up --actor NAME [--note TEXT] [--usd N] [--revisions N] [--tool-call DIGEST [--deny | --args JSON]] [--follow] [--json]',
  cancel: 'handrail cancel <job> [--json]',
  history: 'handrail history <job> [--out file.json] [--json]',
  transcript: 'handrail transcript <job> [--stage STAGE] [--format text|xml] [--json]',
  handoffs:
    'handrail handoffs list [--project PIPELINE] [--state open|accepted|cancelled|closed] [--limit N] [--json] | show|accept|cancel <record> [--json] | decide <record> approve|reject|revise|top-up [--note TEXT] [--usd N] [--revisions N] [--tool-call DIGEST [--deny | --args JSON]] [--json]',
  serve: 'handrail serve a2a|api [--plugin PATH] | handrail serve codec',
  replay:
    "handrail replay [history.json]... [--job ID]... [--query 'VISIBILITY QUERY'] [--workflows PATH | --diff [--pipelines PATH]] [--json]",
  eval: "handrail eval [history.json]... [--query 'VISIBILITY QUERY'] [--jobs dataset.jsonl]... [--pipelines PATH] [--scorers PATH]... [--replay] [--address HOST:PORT] [--concurrency N] [--out results.json] [--json] | handrail eval compare <a.json> <b.json> [--gate 'METRIC[.STAT] OP BOUND']... [--html report.html] [--json]",
};

/** What `handrail <command> --help` says after the usage line, where a line is not enough. */
export const DETAILS: Partial<Record<keyof typeof USAGE, string>> = {
  fork: [
    "Starts a new job from hop N's snapshot of <job> (`handrail show <job> --hop N --json` prints it):",
    'without --package it runs hop N again; with one it starts from your edit. Artifacts there are',
    'store addresses; an artifact you edit goes inline, with no hash:',
    '  {"type": "summary_md", "uri": "data:application/json,<the JSON body, percent-encoded>"}',
    'An edit that keeps the parent\'s pass verdict is refused: reset evaluator.last_verdict to "none".',
    'More: docs/operate.md "Forking from a hop".',
  ].join('\n'),
  follow: [
    "Prints the job's stream: each hop as it starts and is acked, a model's text as it comes, the end.",
    '--from ID resumes after an event id (--json prints each event with its id). Ctrl-C stops',
    'following; the job runs on. More: docs/operate.md "Following a job live".',
  ].join('\n'),
};

const HANDOFF_ACTIONS = ['list', 'show', 'accept', 'cancel', 'decide'] as const;

const TRANSCRIPT_FORMATS: readonly TranscriptFormat[] = ['text', 'xml'];
const RAIL_STATUSES = ['running', ...JobStatus.options] as const;
const json = { json: { type: 'boolean' } } as const;
const follow = { follow: { type: 'boolean' } } as const;
/** The flags of a decision (`decide` and `handoffs decide`): what `decisionFlags` reads. */
const decisionOptions = {
  note: { type: 'string' },
  usd: { type: 'string' },
  revisions: { type: 'string' },
  'tool-call': { type: 'string' },
  deny: { type: 'boolean' },
  args: { type: 'string' },
} as const;

/** `variadic`: more arguments than `positionals` are allowed (`replay`'s files). */
function parse<O extends NonNullable<ParseArgsConfig['options']>>(
  command: keyof typeof USAGE,
  argv: string[],
  options: O,
  positionals: string[],
  variadic = false,
) {
  let values: Record<string, string | string[] | boolean | undefined>;
  let args: string[];
  try {
    ({ values, positionals: args } = parseArgs({
      args: bindNegativeNumbers(argv, options),
      options: { ...options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    }));
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\nusage: ${USAGE[command]}`);
  }
  const help = Boolean(values.help);
  if ((variadic ? args.length < positionals.length : args.length !== positionals.length) && !help) {
    const missing = positionals.slice(args.length);
    const why =
      missing.length > 0
        ? `missing ${missing.map((p) => `<${p}>`).join(' ')}`
        : `unexpected argument "${args[positionals.length]}"`;
    throw new UsageError(`${why}\nusage: ${USAGE[command]}`);
  }
  return { values, args, help };
}

/** parseArgs reads the `-1` of `--usd -1` as an option and calls the value ambiguous; no option
 * here is spelled with a digit, so a negative number after a value-taking flag is its value. */
function bindNegativeNumbers(argv: string[], options: NonNullable<ParseArgsConfig['options']>): string[] {
  const bound: string[] = [];
  for (let n = 0; n < argv.length; n++) {
    const arg = argv[n]!;
    const next = argv[n + 1];
    if (arg === '--') return [...bound, ...argv.slice(n)];
    if (
      next !== undefined &&
      /^-\.?\d/.test(next) &&
      arg.startsWith('--') &&
      options[arg.slice(2)]?.type === 'string'
    ) {
      bound.push(`${arg}=${next}`);
      n++;
    } else bound.push(arg);
  }
  return bound;
}

/** A hop count as typed: digits only (`3.0`, `1e1` or `-0` is no hop count), for `--from-hop`
 * and `--hop`; undefined when the flag is absent. */
function hopCountFlag(raw: unknown): number | undefined | 'invalid' {
  if (raw === undefined) return undefined;
  return typeof raw === 'string' && /^\d{1,9}$/.test(raw) ? Number(raw) : 'invalid';
}

function numberFlag(flag: string, raw: unknown): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (raw === '' || !Number.isFinite(n)) throw new UsageError(`--${flag} must be a number, got "${String(raw)}"`);
  return n;
}

/** A count the CLI itself consumes (the contract validates the rest). */
function positiveIntFlag(flag: string, raw: unknown): number | undefined {
  const n = numberFlag(flag, raw);
  if (n !== undefined && !(Number.isInteger(n) && n >= 1))
    throw new UsageError(`--${flag} must be a whole number of at least 1, got "${String(raw)}"`);
  return n;
}

/** `what` as the user typed it: `--status`, or `<action>` for a positional. */
function slugFlag(what: string, raw: string | undefined): string | undefined {
  if (raw !== undefined && !isSlug(raw))
    throw new UsageError(`${what} must be a lowercase slug (got ${JSON.stringify(raw)})`);
  return raw;
}

function oneOf<T extends string>(what: string, raw: unknown, allowed: readonly T[]): T | undefined {
  if (raw === undefined) return undefined;
  if (!allowed.includes(raw as T))
    throw new UsageError(`${what} must be one of ${allowed.join(', ')}; got "${String(raw)}"`);
  return raw as T;
}

const text = (raw: unknown) => (raw === undefined ? undefined : String(raw));
const defined = <T extends object>(o: T) =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;

/** A flag whose value is a JSON object (a tool call's edited arguments). */
function jsonObjectFlag(flag: string, raw: unknown): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(String(raw));
  } catch {
    throw new UsageError(`--${flag} takes a JSON object, e.g. '{"query": "refunds"}'`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw new UsageError(`--${flag} takes a JSON object, e.g. '{"query": "refunds"}'`);
  return value as Record<string, unknown>;
}

/** A decision's action and amounts as `decide` and `handoffs decide` take them. */
function decisionFlags(rawAction: string, values: Record<string, unknown>) {
  return defined({
    // `top-up` on the command line, `top_up` on the wire (HumanDecision).
    action: oneOf('<action>', rawAction.replace('-', '_'), HumanDecision.shape.action.options),
    note: text(values.note),
    usd: numberFlag('usd', values.usd),
    revisions: numberFlag('revisions', values.revisions),
    // A word on the tool call an escalation waits on: the digest it shows, run or deny.
    tool_call:
      values['tool-call'] === undefined
        ? undefined
        : {
            digest: String(values['tool-call']),
            verdict: values.deny ? ('deny' as const) : ('approve' as const),
            ...(values.args === undefined ? {} : { args: jsonObjectFlag('args', values.args) }),
          },
  });
}

function parseHandoffs(argv: string[]): Command {
  const [action, ...rest] = argv;
  const known = oneOf('handoffs <action>', action === undefined ? undefined : action, HANDOFF_ACTIONS);
  if (known === undefined)
    throw new UsageError(`handoffs needs an action: ${HANDOFF_ACTIONS.join(', ')}\nusage: ${USAGE.handoffs}`);
  switch (known) {
    case 'list': {
      const p = parse(
        'handoffs',
        rest,
        { ...json, project: { type: 'string' }, state: { type: 'string' }, limit: { type: 'string' } },
        [],
      );
      if (p.help) return { name: 'help', topic: 'handoffs' };
      return {
        name: 'handoffs',
        action: 'list',
        ...defined({
          project: slugFlag('--project', p.values.project as string | undefined),
          state: oneOf('--state', p.values.state, ESCALATION_RECORD_STATES),
          limit: positiveIntFlag('limit', p.values.limit),
        }),
        json: Boolean(p.values.json),
      };
    }
    case 'decide': {
      const p = parse('handoffs', rest, { ...json, ...decisionOptions }, ['record', 'action']);
      if (p.help) return { name: 'help', topic: 'handoffs' };
      return {
        name: 'handoffs',
        action: 'decide',
        id: p.args[0]!,
        decision: decisionFlags(p.args[1]!, p.values),
        json: Boolean(p.values.json),
      };
    }
    default: {
      const p = parse('handoffs', rest, json, ['record']);
      if (p.help) return { name: 'help', topic: 'handoffs' };
      return { name: 'handoffs', action: known, id: p.args[0]!, json: Boolean(p.values.json) };
    }
  }
}

export function parseCommand(argv: string[]): Command {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help')
    return { name: 'help', topic: name === 'help' ? rest[0] : undefined };
  switch (name) {
    case 'start': {
      const p = parse(
        'start',
        rest,
        {
          ...json,
          ...follow,
          'job-id': { type: 'string' },
          pipeline: { type: 'string' },
          goal: { type: 'string' },
          constraint: { type: 'string', multiple: true },
          'budget-usd': { type: 'string' },
          revisions: { type: 'string' },
          'max-hops': { type: 'string' },
          'decision-timeout': { type: 'string' },
          owner: { type: 'string' },
        },
        ['ticket.json | -'],
      );
      if (p.help) return { name: 'help', topic: 'start' };
      const flags: StartFlags = defined({
        jobId: text(p.values['job-id']),
        pipeline: slugFlag('--pipeline', p.values.pipeline as string | undefined),
        goal: text(p.values.goal),
        constraints: p.values.constraint as string[] | undefined,
        budgetUsd: numberFlag('budget-usd', p.values['budget-usd']),
        revisions: numberFlag('revisions', p.values.revisions),
        maxHops: numberFlag('max-hops', p.values['max-hops']),
        decisionTimeout: text(p.values['decision-timeout']),
        owner: text(p.values.owner),
      });
      return {
        name: 'start',
        ticket: p.args[0]!,
        flags,
        follow: Boolean(p.values.follow),
        json: Boolean(p.values.json),
      };
    }
    case 'fork': {
      const p = parse(
        name,
        rest,
        {
          ...json,
          ...follow,
          'from-hop': { type: 'string' },
          package: { type: 'string' },
          pipeline: { type: 'string' },
          'job-id': { type: 'string' },
        },
        ['job'],
      );
      if (p.help) return { name: 'help', topic: name };
      const fromHop = hopCountFlag(p.values['from-hop']);
      if (fromHop === undefined || fromHop === 'invalid')
        throw new UsageError(
          `--from-hop N is required: the hop to fork from, 0, 1, 2 …${fromHop === 'invalid' ? `, not "${String(p.values['from-hop'])}"` : ''}\nusage: ${USAGE.fork}`,
        );
      return {
        name: 'fork',
        jobId: p.args[0]!,
        fromHop,
        ...defined({
          packageFile: text(p.values.package),
          pipeline: slugFlag('--pipeline', p.values.pipeline as string | undefined),
          forkId: text(p.values['job-id']),
        }),
        follow: Boolean(p.values.follow),
        json: Boolean(p.values.json),
      };
    }
    case 'show': {
      const p = parse(name, rest, { ...json, hop: { type: 'string' } }, ['job']);
      if (p.help) return { name: 'help', topic: name };
      const hop = hopCountFlag(p.values.hop);
      if (hop === 'invalid')
        throw new UsageError(`--hop must be a hop count (0, 1, 2 …), got "${String(p.values.hop)}"`);
      return { name, jobId: p.args[0]!, ...(hop === undefined ? {} : { hop }), json: Boolean(p.values.json) };
    }
    case 'follow': {
      const p = parse(name, rest, { ...json, from: { type: 'string' } }, ['job']);
      if (p.help) return { name: 'help', topic: name };
      const from = p.values.from;
      if (from !== undefined && !/^\d{1,15}$/.test(String(from)))
        throw new UsageError(`--from must be an event id the job's stream gave (0, 1, 2 …), got "${String(from)}"`);
      return { name, jobId: p.args[0]!, from: Number(from ?? 0), json: Boolean(p.values.json) };
    }
    case 'status':
    case 'cancel': {
      const p = parse(name, rest, json, ['job']);
      if (p.help) return { name: 'help', topic: name };
      return { name, jobId: p.args[0]!, json: Boolean(p.values.json) };
    }
    case 'list': {
      const p = parse(
        'list',
        rest,
        {
          ...json,
          status: { type: 'string' },
          pipeline: { type: 'string' },
          stage: { type: 'string' },
          ack: { type: 'string' },
          verdict: { type: 'string' },
          limit: { type: 'string' },
        },
        [],
      );
      if (p.help) return { name: 'help', topic: 'list' };
      const filter = defined({
        status: oneOf('--status', p.values.status, RAIL_STATUSES),
        // Pipelines name their own stages: any stage slug can be asked for.
        pipeline: slugFlag('--pipeline', p.values.pipeline as string | undefined),
        stage: slugFlag('--stage', p.values.stage as string | undefined),
        ack: oneOf('--ack', p.values.ack, AckState.options),
        verdict: oneOf('--verdict', p.values.verdict, LastVerdict.options),
        limit: positiveIntFlag('limit', p.values.limit),
      });
      return { name: 'list', filter, json: Boolean(p.values.json) };
    }
    case 'decide': {
      const p = parse(
        'decide',
        rest,
        {
          ...json,
          ...follow,
          actor: { type: 'string' },
          ...decisionOptions,
        },
        ['job', 'action'],
      );
      if (p.help) return { name: 'help', topic: 'decide' };
      if (!p.values.actor)
        throw new UsageError(`decide needs --actor (who decides; recorded on the job's acks)\nusage: ${USAGE.decide}`);
      const decision = defined({ ...decisionFlags(p.args[1]!, p.values), actor: text(p.values.actor) });
      return {
        name: 'decide',
        jobId: p.args[0]!,
        decision,
        follow: Boolean(p.values.follow),
        json: Boolean(p.values.json),
      };
    }
    case 'handoffs':
      return parseHandoffs(rest);
    case 'serve': {
      const p = parse('serve', rest, { plugin: { type: 'string' } }, ['server']);
      if (p.help) return { name: 'help', topic: 'serve' };
      const server = oneOf('serve <server>', p.args[0], SERVERS)!;
      const plugin = text(p.values.plugin);
      if (plugin !== undefined && server === 'codec')
        throw new UsageError(
          `serve codec takes no --plugin: the codec server holds keys, not pipelines\nusage: ${USAGE.serve}`,
        );
      if (plugin !== undefined && !plugin.trim())
        throw new UsageError(`--plugin must name a module\nusage: ${USAGE.serve}`);
      return { name: 'serve', server, ...defined({ plugin }) };
    }
    case 'history': {
      const p = parse('history', rest, { ...json, out: { type: 'string', short: 'o' } }, ['job']);
      if (p.help) return { name: 'help', topic: 'history' };
      return {
        name: 'history',
        jobId: p.args[0]!,
        ...defined({ out: text(p.values.out) }),
        json: Boolean(p.values.json),
      };
    }
    case 'transcript': {
      const p = parse('transcript', rest, { ...json, stage: { type: 'string' }, format: { type: 'string' } }, ['job']);
      if (p.help) return { name: 'help', topic: 'transcript' };
      return {
        name: 'transcript',
        jobId: p.args[0]!,
        ...defined({ stage: slugFlag('--stage', p.values.stage as string | undefined) }),
        format: oneOf('--format', p.values.format, TRANSCRIPT_FORMATS) ?? 'text',
        json: Boolean(p.values.json),
      };
    }
    case 'init': {
      const p = parse('init', rest, { handrail: { type: 'string' } }, ['dir']);
      if (p.help) return { name: 'help', topic: 'init' };
      return { name: 'init', dir: p.args[0]!, ...defined({ handrail: text(p.values.handrail) }) };
    }
    case 'replay': {
      const p = parse(
        'replay',
        rest,
        {
          ...json,
          job: { type: 'string', multiple: true },
          query: { type: 'string' },
          workflows: { type: 'string' },
          diff: { type: 'boolean' },
          pipelines: { type: 'string' },
        },
        [],
        true,
      );
      if (p.help) return { name: 'help', topic: 'replay' };
      const jobs = (p.values.job as string[] | undefined) ?? [];
      const query = text(p.values.query);
      if (p.args.length === 0 && jobs.length === 0 && !query)
        throw new UsageError(`replay needs history files, --job or --query\nusage: ${USAGE.replay}`);
      if (query !== undefined && !query.trim())
        throw new UsageError(`--query must not be empty\nusage: ${USAGE.replay}`);
      const diff = Boolean(p.values.diff);
      // --diff runs the pipelines' code, never the workflow module (and a replay never the stages').
      if (diff && p.values.workflows !== undefined)
        throw new UsageError(
          `--diff runs the pipelines and their stages, not the workflow module: name them with --pipelines\nusage: ${USAGE.replay}`,
        );
      if (!diff && p.values.pipelines !== undefined)
        throw new UsageError(`--pipelines goes with --diff\nusage: ${USAGE.replay}`);
      return {
        name: 'replay',
        files: p.args,
        jobs,
        ...defined({ query, workflows: text(p.values.workflows), pipelines: text(p.values.pipelines) }),
        diff,
        json: Boolean(p.values.json),
      };
    }
    case 'eval':
      return parseEval(rest);
    default:
      throw new UsageError(`unknown command "${name}"; commands: ${Object.keys(USAGE).join(', ')} (handrail --help)`);
  }
}

function parseEval(argv: string[]): Command {
  if (argv[0] === 'compare') {
    const p = parse(
      'eval',
      argv.slice(1),
      { ...json, gate: { type: 'string', multiple: true }, html: { type: 'string' } },
      ['a.json', 'b.json'],
    );
    if (p.help) return { name: 'help', topic: 'eval' };
    const gates = ((p.values.gate as string[] | undefined) ?? []).map((g) => {
      try {
        return parseGate(g);
      } catch (err) {
        if (err instanceof GateSyntaxError) throw new UsageError(`--gate: ${err.message}`);
        throw err;
      }
    });
    return {
      name: 'eval',
      action: 'compare',
      a: p.args[0]!,
      b: p.args[1]!,
      gates,
      ...defined({ html: text(p.values.html) }),
      json: Boolean(p.values.json),
    };
  }
  const p = parse(
    'eval',
    argv,
    {
      ...json,
      query: { type: 'string' },
      jobs: { type: 'string', multiple: true },
      pipelines: { type: 'string' },
      scorers: { type: 'string', multiple: true },
      replay: { type: 'boolean' },
      address: { type: 'string' },
      concurrency: { type: 'string' },
      out: { type: 'string', short: 'o' },
    },
    [],
    true,
  );
  if (p.help) return { name: 'help', topic: 'eval' };
  const query = text(p.values.query);
  const datasets = (p.values.jobs as string[] | undefined) ?? [];
  if (p.args.length === 0 && datasets.length === 0 && !query)
    throw new UsageError(`eval needs history files, --query or --jobs\nusage: ${USAGE.eval}`);
  if (query !== undefined && !query.trim()) throw new UsageError(`--query must not be empty\nusage: ${USAGE.eval}`);
  return {
    name: 'eval',
    action: 'run',
    files: p.args,
    datasets,
    scorers: (p.values.scorers as string[] | undefined) ?? [],
    ...defined({
      query,
      pipelines: text(p.values.pipelines),
      address: text(p.values.address),
      concurrency: positiveIntFlag('concurrency', p.values.concurrency),
      out: text(p.values.out),
    }),
    replay: Boolean(p.values.replay),
    json: Boolean(p.values.json),
  };
}
