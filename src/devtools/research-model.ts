/**
 * The research-brief pipeline's offline model: the scripted OpenAI-compatible server answering
 * each stage as a small, deterministic model would (by the stage its system prompt names), with
 * token usage counted from what it was sent (one token per four characters) and what it answers,
 * so a longer handover costs more tokens, as on a real provider.
 */
import { SYSTEM } from '../../activities/research-brief/stages';
import { startScriptedModel, type ChatRequestBody, type ScriptedModel, type ScriptedAnswer } from './scripted-model';

type Message = ChatRequestBody['messages'][number];
const tokens = (text: string) => Math.ceil(text.length / 4);
const textOf = (m: Message) => m.content ?? JSON.stringify(m.tool_calls ?? []);

/** The offline model, with the tokens it has billed so far. */
export interface ResearchModel extends ScriptedModel {
  billed: { prompt_tokens: number; completion_tokens: number };
}

export async function startResearchModel(): Promise<ResearchModel> {
  const billed = { prompt_tokens: 0, completion_tokens: 0 };
  const server = await startScriptedModel((request) => {
    const reply = answer(request.messages);
    const sent = request.messages.map(textOf).join('\n') + JSON.stringify(request.tools ?? []);
    const answered = 'text' in reply ? reply.text : JSON.stringify(reply.toolCalls);
    const usage = { prompt_tokens: tokens(sent), completion_tokens: tokens(answered) };
    billed.prompt_tokens += usage.prompt_tokens;
    billed.completion_tokens += usage.completion_tokens;
    return { ...reply, usage };
  });
  return Object.assign(server, { billed });
}

function answer(messages: Message[]): ScriptedAnswer {
  const system = messages.find((m) => m.role === 'system')?.content ?? '';
  const question = [...messages].reverse().find((m) => m.role === 'user')?.content ?? '';
  if (system === SYSTEM.planner) return { text: JSON.stringify(plan(question)) };
  if (system === SYSTEM.researcher) return research(messages, question);
  if (system === SYSTEM.critic) return { text: JSON.stringify(critique(question)) };
  if (system === SYSTEM.writer) return { text: JSON.stringify(brief(question)) };
  return { text: 'I am the research-brief offline model; I answer its stages only.' };
}

const TOPICS: readonly [RegExp, string][] = [
  [/twice|duplicate|double/i, 'duplicate charge refund'],
  [/how long|when|days/i, 'refund timing days'],
  [/annual|upgrade/i, 'annual plan refund'],
];

function plan(question: string) {
  const queries = TOPICS.filter(([pattern]) => pattern.test(question)).map(([, query]) => query);
  return {
    question: question.split('\n')[0]!.slice(0, 2_000),
    queries: queries.length > 0 ? queries : ['how refunds work'],
  };
}

/** Step 1 searches every planned query; step 2 reports what the searches found. */
function research(messages: Message[], question: string): ScriptedAnswer {
  const results = messages.filter((m) => m.role === 'tool');
  if (results.length === 0) {
    const queries = [...question.matchAll(/^- (.+)$/gm)].map((m) => m[1]!);
    return { toolCalls: queries.map((query, i) => ({ id: `call_search_${i + 1}`, name: 'search', input: { query } })) };
  }
  const asked = new Map<string, string>();
  for (const m of messages)
    for (const call of (m.tool_calls ?? []) as { id: string; function: { arguments: string } }[])
      asked.set(call.id, (JSON.parse(call.function.arguments) as { query: string }).query);
  const findings = results.flatMap((r) =>
    hitsIn(r.content).map((hit) => ({
      query: asked.get(r.tool_call_id ?? '') ?? 'search',
      ...hit,
    })),
  );
  return { text: JSON.stringify({ findings }) };
}

type Hit = { source: string; fact: string };

/** The library hits in a tool result, however the MCP result was wrapped on its way here (its
 * text content as JSON, possibly as a JSON string again). */
function hitsIn(value: unknown): Hit[] {
  if (typeof value === 'string') {
    try {
      return hitsIn(JSON.parse(value));
    } catch {
      return [];
    }
  }
  if (Array.isArray(value)) return value.flatMap(hitsIn);
  if (value === null || typeof value !== 'object') return [];
  const record = value as Record<string, unknown>;
  if (typeof record.source === 'string' && typeof record.fact === 'string')
    return [{ source: record.source, fact: record.fact }];
  return Object.values(record).flatMap(hitsIn);
}

function critique(question: string) {
  const notes = /Notes: (.*)$/m.exec(question)?.[1];
  const findings = notes ? ((JSON.parse(notes) as { findings: { source?: string }[] }).findings ?? []) : [];
  const failures =
    findings.length === 0 ? ['no findings'] : findings.filter((f) => !f.source).map(() => 'a finding has no source');
  return {
    verdict: failures.length === 0 ? 'pass' : 'fail',
    scores: { coverage: findings.length > 0 ? 1 : 0 },
    failures,
  };
}

function brief(question: string) {
  const asked = /^Question: (.*)$/m.exec(question)?.[1] ?? 'the question';
  const findings = JSON.parse(/^Findings: (.*)$/m.exec(question)?.[1] ?? '[]') as { fact: string; source: string }[];
  const lines = [...new Map(findings.map((f) => [f.fact, f])).values()].map((f) => `- ${f.fact} (${f.source})`);
  return { title: `Brief: ${asked}`.slice(0, 200), markdown: `## ${asked}\n\n${lines.join('\n')}\n` };
}
