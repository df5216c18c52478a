/**
 * Connections with a deadline: a missing server is a clear error within seconds, not a hang.
 */
import { Connection, isGrpcServiceError } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { HandrailConfig } from './config';

export class TemporalUnreachableError extends Error {
  override readonly name = 'TemporalUnreachableError';
  constructor(address: string, namespace: string, cause: unknown) {
    const why = cause instanceof Error ? cause.message.split('\n')[0] : String(cause);
    super(
      `Cannot reach Temporal at ${address} (namespace "${namespace}"): ${why}. ` +
        'Start a local server with `npm run server`, or set TEMPORAL_ADDRESS to a running one.',
    );
  }
}

/** The server answers but has no such namespace: no server restart will help, a setting will. */
export class NamespaceNotFoundError extends Error {
  override readonly name = 'NamespaceNotFoundError';
  constructor(address: string, namespace: string) {
    super(
      `Temporal at ${address} has no namespace "${namespace}". ` +
        `Set TEMPORAL_NAMESPACE to an existing one, or create it: temporal operator namespace create --address ${address} --namespace ${namespace}`,
    );
  }
}

/** gRPC status NOT_FOUND (grpc-js `status.NOT_FOUND`), which DescribeNamespace returns for an unknown namespace. */
const GRPC_NOT_FOUND = 5;

type Target = Pick<HandrailConfig, 'temporalAddress' | 'namespace'> & Partial<Pick<HandrailConfig, 'connection'>>;

async function withDeadline<T>(what: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms / 1000} s`)), ms);
  });
  try {
    return await Promise.race([what, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** A client connection that has proven the namespace answers. */
export async function connectClient(target: Target, timeoutMs = 5_000): Promise<Connection> {
  let connection: Connection | undefined;
  try {
    connection = await Connection.connect({
      ...target.connection,
      address: target.temporalAddress,
      connectTimeout: timeoutMs,
    });
    await withDeadline(connection.workflowService.describeNamespace({ namespace: target.namespace }), timeoutMs);
    return connection;
  } catch (err) {
    await connection?.close().catch(() => undefined);
    if (isGrpcServiceError(err) && err.code === GRPC_NOT_FOUND)
      throw new NamespaceNotFoundError(target.temporalAddress, target.namespace);
    throw new TemporalUnreachableError(target.temporalAddress, target.namespace, err);
  }
}

/** The worker's connection, with the same deadline. */
export async function connectWorker(target: Target, timeoutMs = 5_000): Promise<NativeConnection> {
  try {
    return await withDeadline(
      NativeConnection.connect({ ...target.connection, address: target.temporalAddress }),
      timeoutMs,
    );
  } catch (err) {
    throw new TemporalUnreachableError(target.temporalAddress, target.namespace, err);
  }
}
