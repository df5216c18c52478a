export {
  runAgent,
  ModelOutputError,
  ReservationExhausted,
  type AgentAnswer,
  type AgentRun,
  type AgentStep,
} from './run-agent';
export { checkpointedModel, checkpointedTools, type StageLanguageModel } from './checkpoint';
export { attemptSteps, storedSteps, type StepJournal } from './step-journal';
