/** The research-brief pipeline's artifact bodies (zod: the worker side; the model's output formats). */
import { z } from 'zod';

export const ResearchPlan = z.object({
  question: z.string().min(1).max(2_000),
  queries: z.array(z.string().min(1).max(200)).min(1).max(3),
});
export type ResearchPlan = z.infer<typeof ResearchPlan>;

export const ResearchNotes = z.object({
  findings: z
    .array(z.object({ query: z.string().min(1), fact: z.string().min(1).max(1_000), source: z.string().min(1) }))
    .min(1)
    .max(10),
});
export type ResearchNotes = z.infer<typeof ResearchNotes>;

export const Brief = z.object({ title: z.string().min(1).max(200), markdown: z.string().min(1).max(8_000) });
export type Brief = z.infer<typeof Brief>;
