import { describe, expect, it } from 'vitest';
import { parseCommand, UsageError } from '../../../src/operator/cli/args';

describe('handrail command lines', () => {
  it('start takes a ticket file and turns the flags into numbers and a constraint list', () => {
    expect(
      parseCommand([
        'start',
        't.json',
        '--job-id',
        'j1',
        '--pipeline',
        'ticket-hub',
        '--constraint',
        'a',
        '--constraint',
        'b',
        '--budget-usd',
        '0.5',
        '--revisions',
        '1',
        '--max-hops',
        '6',
        '--follow',
      ]),
    ).toEqual({
      name: 'start',
      ticket: 't.json',
      flags: { jobId: 'j1', pipeline: 'ticket-hub', constraints: ['a', 'b'], budgetUsd: 0.5, revisions: 1, maxHops: 6 },
      follow: true,
      json: false,
    });
  });

  it('decide spells top-up as the wire action top_up and requires an actor', () => {
    expect(parseCommand(['decide', 'j1', 'top-up', '--actor', 'ops', '--usd', '1'])).toMatchObject({
      name: 'decide',
      jobId: 'j1',
      decision: { action: 'top_up', actor: 'ops', usd: 1 },
    });
    expect(
      parseCommand(['decide', 'j1', 'approve', '--actor', 'ops', '--tool-call', 'sha256:ab', '--deny', '--note', 'no']),
    ).toMatchObject({
      decision: { action: 'approve', actor: 'ops', note: 'no', tool_call: { digest: 'sha256:ab', verdict: 'deny' } },
    });
    expect(parseCommand(['decide', 'j1', 'approve', '--actor', 'ops', '--tool-call', 'sha256:ab'])).toMatchObject({
      decision: { tool_call: { digest: 'sha256:ab', verdict: 'approve' } },
    });
    expect(() => parseCommand(['decide', 'j1', 'approve'])).toThrow(/decide needs --actor/);
    expect(() => parseCommand(['decide', 'j1', 'maybe', '--actor', 'ops'])).toThrow(
      /<action> must be one of approve, reject, revise, top_up/,
    );
  });

  it('handoffs: list filters, show/accept/cancel a record, decide without --actor (the token is the actor)', () => {
    expect(
      parseCommand(['handoffs', 'list', '--project', 'ticket-triage', '--state', 'accepted', '--limit', '5', '--json']),
    ).toEqual({ name: 'handoffs', action: 'list', project: 'ticket-triage', state: 'accepted', limit: 5, json: true });
    expect(parseCommand(['handoffs', 'list'])).toEqual({ name: 'handoffs', action: 'list', json: false });
    expect(parseCommand(['handoffs', 'accept', 'hr_1'])).toEqual({
      name: 'handoffs',
      action: 'accept',
      id: 'hr_1',
      json: false,
    });
    expect(parseCommand(['handoffs', 'decide', 'hr_1', 'top-up', '--usd', '1', '--note', 'ok'])).toEqual({
      name: 'handoffs',
      action: 'decide',
      id: 'hr_1',
      decision: { action: 'top_up', usd: 1, note: 'ok' },
      json: false,
    });
    expect(() => parseCommand(['handoffs', 'decide', 'hr_1', 'approve', '--actor', 'mallory'])).toThrow(
      /Unknown option '--actor'/,
    );
    expect(() => parseCommand(['handoffs', 'list', '--state', 'gone'])).toThrow(
      /--state must be one of open, accepted, cancelled, closed/,
    );
    expect(() => parseCommand(['handoffs'])).toThrow(/handoffs needs an action: list, show, accept, cancel, decide/);
    expect(() => parseCommand(['handoffs', 'take', 'hr_1'])).toThrow(/handoffs <action> must be one of/);
    expect(() => parseCommand(['handoffs', 'show'])).toThrow(/missing <record>/);
    expect(parseCommand(['start', 't.json', '--owner', 'ana'])).toMatchObject({ flags: { owner: 'ana' } });
  });

  it('serve: a2a or api with an optional --plugin module, codec without one', () => {
    expect(parseCommand(['serve', 'a2a', '--plugin', './dist/src/plugin.js'])).toEqual({
      name: 'serve',
      server: 'a2a',
      plugin: './dist/src/plugin.js',
    });
    expect(parseCommand(['serve', 'api'])).toEqual({ name: 'serve', server: 'api' });
    expect(parseCommand(['serve', 'codec'])).toEqual({ name: 'serve', server: 'codec' });
    expect(parseCommand(['serve', '--help'])).toEqual({ name: 'help', topic: 'serve' });
    expect(() => parseCommand(['serve'])).toThrow(/missing <server>/);
    expect(() => parseCommand(['serve', 'web'])).toThrow(/serve <server> must be one of a2a, api, codec; got "web"/);
    expect(() => parseCommand(['serve', 'codec', '--plugin', 'p.js'])).toThrow(/serve codec takes no --plugin/);
    expect(() => parseCommand(['serve', 'api', '--plugin', ' '])).toThrow(/--plugin must name a module/);
    expect(() => parseCommand(['serve', 'api', '--port', '1'])).toThrow(/Unknown option '--port'/);
    expect(() => parseCommand(['serve', 'api', 'a2a'])).toThrow(/unexpected argument "a2a"/);
  });

  it('list checks filter values against the contract enums', () => {
    expect(parseCommand(['list', '--status', 'escalated', '--ack', 'rejected_budget', '--stage', 'draft'])).toEqual({
      name: 'list',
      filter: { status: 'escalated', ack: 'rejected_budget', stage: 'draft' },
      json: false,
    });
    expect(() => parseCommand(['list', '--ack', 'nope'])).toThrow(UsageError);
  });

  it('fork: the job, the hop to fork from (required, 0 or more), an edited package, a pipeline, a job id', () => {
    expect(parseCommand(['fork', 'job-1', '--from-hop', '2', '--package', 'edited.json', '--pipeline', 'p'])).toEqual({
      name: 'fork',
      jobId: 'job-1',
      fromHop: 2,
      packageFile: 'edited.json',
      pipeline: 'p',
      follow: false,
      json: false,
    });
    expect(parseCommand(['fork', 'job-1', '--from-hop', '0', '--job-id', 'f', '--follow'])).toMatchObject({
      fromHop: 0,
      forkId: 'f',
      follow: true,
    });
    expect(() => parseCommand(['fork', 'job-1'])).toThrow(/--from-hop N is required/);
    expect(() => parseCommand(['fork', 'job-1', '--from-hop', '1.5'])).toThrow(/--from-hop N is required/);
    // Typed as a number but not as a hop count: refused, not read as 3.
    expect(() => parseCommand(['fork', 'job-1', '--from-hop', '3.0'])).toThrow(/not "3\.0"/);
    expect(() => parseCommand(['show', 'job-1', '--hop', '1e1'])).toThrow(/--hop must be a hop count/);
    expect(() => parseCommand(['fork', '--from-hop', '1'])).toThrow(/missing <job>/);
  });

  it('usage errors name what is wrong: missing job, extra argument, unknown flag, bad number, unknown command', () => {
    expect(() => parseCommand(['status'])).toThrow(/missing <job>/);
    expect(() => parseCommand(['status', 'a', 'b'])).toThrow(/unexpected argument "b"/);
    expect(() => parseCommand(['show', 'a', '--colour'])).toThrow(/Unknown option '--colour'/);
    expect(() => parseCommand(['start', 't.json', '--budget-usd', 'lots'])).toThrow(
      /--budget-usd must be a number, got "lots"/,
    );
    expect(() => parseCommand(['stop', 'a'])).toThrow(/unknown command "stop"/);
  });

  it('negative numbers are values, not options: parsed here, refused by the contract or the limit check', () => {
    expect(parseCommand(['start', 't.json', '--budget-usd', '-1', '--revisions', '-2'])).toMatchObject({
      flags: { budgetUsd: -1, revisions: -2 },
    });
    expect(parseCommand(['decide', 'j1', 'top-up', '--actor', 'ops', '--usd', '-.5'])).toMatchObject({
      decision: { usd: -0.5 },
    });
    expect(() => parseCommand(['list', '--limit', '-5'])).toThrow(
      /--limit must be a whole number of at least 1, got "-5"/,
    );
    // After `--` everything is positional, as before.
    expect(parseCommand(['start', '--', '-1'])).toMatchObject({ ticket: '-1' });
  });

  it('list --limit takes whole numbers from 1', () => {
    expect(parseCommand(['list', '--limit', '3'])).toMatchObject({ filter: { limit: 3 } });
    for (const limit of ['0', '2.5'])
      expect(() => parseCommand(['list', '--limit', limit])).toThrow(
        new RegExp(`--limit must be a whole number of at least 1, got "${limit}"`),
      );
  });

  it('transcript takes a job, an optional stage slug and a format (text unless asked for xml)', () => {
    expect(parseCommand(['transcript', 'j1'])).toEqual({
      name: 'transcript',
      jobId: 'j1',
      format: 'text',
      json: false,
    });
    expect(parseCommand(['transcript', 'j1', '--stage', 'crm-note', '--format', 'xml', '--json'])).toEqual({
      name: 'transcript',
      jobId: 'j1',
      stage: 'crm-note',
      format: 'xml',
      json: true,
    });
    expect(() => parseCommand(['transcript', 'j1', '--format', 'html'])).toThrow(
      /--format must be one of text, xml; got "html"/,
    );
    expect(() => parseCommand(['transcript', 'j1', '--stage', 'Draft'])).toThrow(/--stage must be a lowercase slug/);
    expect(() => parseCommand(['transcript'])).toThrow(/missing <job>\nusage: handrail transcript <job>/);
    expect(parseCommand(['transcript', '--help'])).toEqual({ name: 'help', topic: 'transcript' });
  });

  it('replay takes any number of history files, repeatable --job, a --query and --workflows, and needs at least one source', () => {
    expect(
      parseCommand([
        'replay',
        'a.json',
        'b.json',
        '--job',
        'j1',
        '--job',
        'j2',
        '--query',
        'ExecutionStatus="Running"',
        '--workflows',
        'w.ts',
        '--json',
      ]),
    ).toEqual({
      name: 'replay',
      files: ['a.json', 'b.json'],
      jobs: ['j1', 'j2'],
      query: 'ExecutionStatus="Running"',
      workflows: 'w.ts',
      diff: false,
      json: true,
    });
    expect(parseCommand(['replay', '--job', 'j1'])).toEqual({
      name: 'replay',
      files: [],
      jobs: ['j1'],
      diff: false,
      json: false,
    });
    expect(() => parseCommand(['replay'])).toThrow(/replay needs history files, --job or --query/);
    expect(() => parseCommand(['replay', '--query', ' '])).toThrow(/--query must not be empty/);
    expect(parseCommand(['replay', '--help'])).toEqual({ name: 'help', topic: 'replay' });
  });

  it('replay --diff takes --pipelines; --pipelines needs --diff and --diff refuses --workflows', () => {
    expect(parseCommand(['replay', 'a.json', '--diff', '--pipelines', 'p.ts'])).toEqual({
      name: 'replay',
      files: ['a.json'],
      jobs: [],
      pipelines: 'p.ts',
      diff: true,
      json: false,
    });
    expect(() => parseCommand(['replay', 'a.json', '--pipelines', 'p.ts'])).toThrow(/--pipelines goes with --diff/);
    expect(() => parseCommand(['replay', 'a.json', '--diff', '--workflows', 'w.ts'])).toThrow(
      /--diff runs the pipelines and their stages, not the workflow module/,
    );
  });

  it('help: bare, --help, and per command', () => {
    expect(parseCommand([])).toEqual({ name: 'help', topic: undefined });
    expect(parseCommand(['--help'])).toEqual({ name: 'help', topic: undefined });
    expect(parseCommand(['history', '--help'])).toEqual({ name: 'help', topic: 'history' });
  });
});
