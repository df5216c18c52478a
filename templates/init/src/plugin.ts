// One configuration for the worker, clients and replay: the pipelines, their activities and the
// workflow module (plus handrail's data converter and bundler options).
import { HandrailPlugin } from 'handrail';
import { expenseActivities } from './activities.js';
import { pipelines } from './pipeline.js';

export const handrail = new HandrailPlugin({
  pipelines,
  activities: expenseActivities,
  workflowsPath: require.resolve('./workflows.js'),
});
