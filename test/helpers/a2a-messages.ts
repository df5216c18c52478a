/** A2A messages as a caller sends them, for tests of handrail's A2A server. */
import { Role, type Message } from '@a2a-js/sdk';

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
