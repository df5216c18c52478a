/** A2A messages as a caller sends them, for tests of handrail's A2A server. */
import { Role, type Message } from '@a2a-js/sdk';
import { BUILT_IN_PIPELINES } from '../../contracts/pipelines';
import { buildA2aServer } from '../../src/servers/a2a/server';
import { apiUsers, sha256Token } from '../../src/servers/api-users';
import type { Rail } from './rail';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';

/** A user message whose one data part is `data`. */
export function userMessage(data: unknown, over: Partial<Message> = {}): Message {
  return {
    messageId: crypto.randomUUID(),
    contextId: '',
    taskId: '',
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'data', value: data }, metadata: undefined, filename: '', mediaType: '' }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
    ...over,
  };
}

/** An `@a2a-js/sdk` client of the A2A server at `base`, sending `token` as its bearer. */
export async function a2aClient(base: string, token: string): Promise<Client> {
  const fetchImpl: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${token}`);
    return fetch(input, { ...init, headers });
  };
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
    }),
  );
  return factory.createFromUrl(base);
}

/** The rail's built-in pipelines served over A2A for one user `ana` (token `token`), with a client
 * of hers; `close` stops the server. */
export async function a2aServerFor(
  rail: Pick<Rail, 'client' | 'taskQueue' | 'store'>,
  token: string,
): Promise<{ client: Client; close: () => Promise<void> }> {
  const server = buildA2aServer({
    temporal: rail.client,
    users: apiUsers({ ana: { token_sha256: sha256Token(token), role: 'user' } }),
    pipelines: BUILT_IN_PIPELINES,
    taskQueue: rail.taskQueue,
    store: rail.store,
  });
  const base = await server.listen({ port: 0, host: '127.0.0.1' });
  return { client: await a2aClient(base, token), close: () => server.close() };
}
