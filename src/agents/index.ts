export {
  runAgent,
  ModelOutputError,
  ReservationExhausted,
  ToolApprovalPending,
  type AgentAnswer,
  type ApprovalGate,
  type AgentRun,
  type AgentStep,
} from './run-agent';
export { checkpointedModel, checkpointedTools, type StageLanguageModel } from './checkpoint';
export { attemptSteps, storedSteps, type StepJournal } from './step-journal';
export { approvalGate } from './approval';
