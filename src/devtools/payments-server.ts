/**
 * A small payments API on a local port, standing in for a SaaS without idempotency support: every
 * POST that reaches it makes a payment (unless `honoursIdempotencyKey`), and it can fail requests
 * the ways a network does — commit the payment and then drop the connection, commit it and never
 * answer (the client times out), or drop it before committing; or refuse it for good. `payments` counts the real remote
 * writes; `requests` is its log of every POST and how it ended. The effect ledger's tests and the
 * write chaos (`npm run chaos -- --writes`) run against it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type NetworkFault = 'commit_then_drop' | 'timeout_after_commit' | 'drop_before_commit';
export const NETWORK_FAULTS: readonly NetworkFault[] = [
  'commit_then_drop',
  'timeout_after_commit',
  'drop_before_commit',
];
/** A network fault, or `refuse`: the API answers a final 422 and pays nothing. */
export type PaymentFault = NetworkFault | 'refuse';

export interface Payment {
  id: string;
  client_reference: string | null;
  body: unknown;
}

/** One POST as the server saw it. */
export interface PaymentRequest {
  client_reference: string | null;
  fault?: PaymentFault;
  /** The payment this request made (or found, by its idempotency key), when it committed one. */
  payment?: string;
  /** How it ended: answered (2xx), refused (4xx, nothing paid), dropped by the fault, or the client
   * went away before the answer (its connection closed while the answer was held). */
  ending: 'pending' | 'answered' | 'refused' | 'dropped' | 'client_gone';
}

export interface PaymentsServerOptions {
  honoursIdempotencyKey?: boolean;
  /** How long a committed payment's answer is held before it goes out (or the fault drops it): the
   * window between the remote commit and the writer noting it, where chaos kills the worker. */
  holdMs?: number;
  /** How long `timeout_after_commit` keeps the connection open, silent, before dropping it. */
  silentMs?: number;
  /** A fault for a request the `faults` queue has none for (the chaos draws them from its seed). */
  chooseFault?: (clientReference: string | null) => NetworkFault | undefined;
  /** Told of each payment as it commits, before its answer is held. */
  onCommit?: (payment: Payment) => void;
}

export interface PaymentsServer {
  url: string;
  /** Every payment made, in order: the remote writes. */
  readonly payments: Payment[];
  /** Every POST, in order of arrival. */
  readonly requests: PaymentRequest[];
  /** Faults for the next POSTs, consumed one per request. */
  faults: PaymentFault[];
  close(): Promise<void>;
}

export async function startPaymentsServer(opts: PaymentsServerOptions = {}): Promise<PaymentsServer> {
  const payments: Payment[] = [];
  const requests: PaymentRequest[] = [];
  const byKey = new Map<string, Payment>();
  const state = { faults: [] as PaymentFault[] };

  const pay = (req: http.IncomingMessage, res: http.ServerResponse, raw: string) => {
    const body = JSON.parse(raw) as { client_reference?: string; usd?: unknown };
    const logged: PaymentRequest = { client_reference: body.client_reference ?? null, ending: 'pending' };
    requests.push(logged);
    const fault = state.faults.shift() ?? opts.chooseFault?.(logged.client_reference);
    if (fault) logged.fault = fault;
    const drop = () => {
      logged.ending = req.socket.destroyed ? 'client_gone' : 'dropped';
      req.socket.destroy();
    };
    if (fault === 'drop_before_commit') return drop();
    const refusal =
      fault === 'refuse'
        ? 'payment refused: the account is closed'
        : typeof body.usd !== 'number' || body.usd <= 0
          ? 'usd must be a positive amount'
          : undefined;
    if (refusal) {
      logged.ending = 'refused';
      res.statusCode = 422;
      res.end(JSON.stringify({ error: refusal }));
      return;
    }
    const payment = commit(req.headers['idempotency-key'], body);
    logged.payment = payment.id;
    const answer = () => {
      if (req.socket.destroyed) logged.ending = 'client_gone';
      else if (fault === 'commit_then_drop') drop();
      else if (fault === 'timeout_after_commit') setTimeout(drop, opts.silentMs ?? 10_000).unref();
      else {
        logged.ending = 'answered';
        res.statusCode = 201;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ id: payment.id }));
      }
    };
    if (opts.holdMs) setTimeout(answer, opts.holdMs);
    else answer();
  };

  const commit = (key: string | string[] | undefined, body: { client_reference?: string }): Payment => {
    const earlier = opts.honoursIdempotencyKey && typeof key === 'string' ? byKey.get(key) : undefined;
    if (earlier) return earlier;
    const payment = { id: `pay_${payments.length + 1}`, client_reference: body.client_reference ?? null, body };
    payments.push(payment);
    if (typeof key === 'string') byKey.set(key, payment);
    opts.onCommit?.(payment);
    return payment;
  };

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://payments');
    if (req.method === 'GET' && url.pathname === '/v1/payments') {
      const ref = url.searchParams.get('client_reference');
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ data: payments.filter((p) => p.client_reference === ref) }));
      return;
    }
    if (req.method !== 'POST' || url.pathname !== '/v1/payments') {
      res.statusCode = 404;
      res.end('{}');
      return;
    }
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    req.on('end', () => pay(req, res, raw));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    payments,
    requests,
    get faults() {
      return state.faults;
    },
    set faults(next) {
      state.faults = next;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
