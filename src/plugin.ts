/**
 * `HandrailPlugin`: one configuration object for a worker, a client and replay — the pipelines,
 * their stage activities, the workflow module, the data converter (with the payload codec) and
 * the rail's bundler options. Built on the SDK's own plugin convention (`SimplePlugin` from
 * `@temporalio/plugin`), so it goes where Temporal takes plugins:
 *
 *   const handrail = new HandrailPlugin({ pipelines, activities, workflowsPath: require.resolve('./workflows') });
 *   await createHandrailWorkers({ connection, plugin: handrail, store });     // the worker
 *   const client = new Client({ connection, plugins: [handrail] });          // a client
 *   await startJob(client, request);                                         // knows the pipelines
 */
import { SimplePlugin } from '@temporalio/plugin';
import type { Client } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import type { BundleOptions, WorkerOptions } from '@temporalio/worker';
import type { ActivityDeps } from '../activities/deps';
import type { StageActivity } from '../activities/stage';
import type { Pipeline, StageNameOf } from '../contracts';
import { handrailDataConverter } from './codec';
import { railBundlerOptions } from './worker/bundle';
import { railSinks } from './worker/tracing';

/** One activity per stage of every pipeline, named after its card: a missing or misnamed one is a compile error. */
export type ActivitiesFor<P extends readonly Pipeline[]> = { readonly [K in StageNameOf<P[number]>]: StageActivity };

export interface HandrailPluginOptions<P extends readonly Pipeline[]> {
  /** The pipelines this worker runs and this client starts: the list the workflow module passes
   * to `createRail`, in the same order (the first is a request's default). */
  pipelines: P;
  /** Their stage activities, built from the worker's store (and model, when configured). A worker
   * needs them; a client does not. */
  activities?: (deps: ActivityDeps) => ActivitiesFor<P>;
  /** The workflow module exporting `createRail(pipelines)`'s workflows (`require.resolve('./workflows')`). */
  workflowsPath?: string;
  /** Payload conversion and encryption; by default handrail's, with codec keys from the
   * environment (HANDRAIL_CODEC_KEYS / HANDRAIL_CODEC_KEYS_FILE). */
  dataConverter?: DataConverter;
  /** Modules of the user's own to evaluate once per worker instead of once per workflow run
   * (pure, stateless modules only: the SDK freezes them). */
  preloadModules?: readonly string[];
}

const PLUGIN_NAME = 'handrail';

export class HandrailPlugin<P extends readonly Pipeline[] = readonly Pipeline[]> extends SimplePlugin {
  readonly pipelines: P;
  readonly activities: ((deps: ActivityDeps) => ActivitiesFor<P>) | undefined;
  readonly workflowsPath: string | undefined;
  readonly dataConverter: DataConverter;
  readonly preloadModules: readonly string[];

  constructor(options: HandrailPluginOptions<P>) {
    const dataConverter = options.dataConverter ?? handrailDataConverter();
    super({ name: PLUGIN_NAME, dataConverter });
    this.pipelines = options.pipelines;
    this.activities = options.activities;
    this.workflowsPath = options.workflowsPath;
    this.dataConverter = dataConverter;
    this.preloadModules = options.preloadModules ?? [];
  }

  /** The rail's bundle: its shared contracts preloaded once per worker and native class syntax
   * (src/worker/bundle.ts), on top of whatever the bundle options already hold. */
  override configureBundler(options: BundleOptions): BundleOptions {
    return railBundlerOptions(super.configureBundler(options), this.preloadModules);
  }

  /** Hop spans go to the process's tracer unless the worker brings sinks of its own. */
  override configureWorker(options: WorkerOptions): WorkerOptions {
    const configured = super.configureWorker(options);
    return { ...configured, sinks: { ...railSinks(), ...configured.sinks } };
  }
}

/** The handrail plugin a client was created with, if any (`new Client({ plugins: [handrail] })`). */
export function handrailPluginOf(client: Client): HandrailPlugin | undefined {
  const plugins = (client.options as { plugins?: readonly unknown[] }).plugins ?? [];
  return plugins.find((p): p is HandrailPlugin => p instanceof HandrailPlugin);
}
