/**
 * A small payments API on a local port, standing in for a SaaS without idempotency support: every
 * POST that reaches it makes a payment (unless `honoursIdempotencyKey`), and it can be told to fail
 * the next requests the ways a network does — commit the payment and then drop the connection, or
 * drop it before committing. `payments` counts the real remote writes.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type PaymentFault = 'commit_then_drop' | 'drop_before_commit';

export interface Payment {
  id: string;
  client_reference: string | null;
  body: unknown;
}

export interface PaymentsServer {
  url: string;
  /** Every payment made, in order: the remote writes. */
  readonly payments: Payment[];
  /** Faults for the next POSTs, consumed one per request. */
  faults: PaymentFault[];
  close(): Promise<void>;
}

export async function startPaymentsServer(opts: { honoursIdempotencyKey?: boolean } = {}): Promise<PaymentsServer> {
  const payments: Payment[] = [];
  const byKey = new Map<string, Payment>();
  const state = { faults: [] as PaymentFault[] };
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
    req.on('end', () => {
      const fault = state.faults.shift();
      if (fault === 'drop_before_commit') return req.socket.destroy();
      const body = JSON.parse(raw) as { client_reference?: string; usd?: unknown };
      if (typeof body.usd !== 'number' || body.usd <= 0) {
        res.statusCode = 422;
        res.end(JSON.stringify({ error: 'usd must be a positive amount' }));
        return;
      }
      const key = req.headers['idempotency-key'];
      const earlier = opts.honoursIdempotencyKey && typeof key === 'string' ? byKey.get(key) : undefined;
      const payment = earlier ?? {
        id: `pay_${payments.length + 1}`,
        client_reference: body.client_reference ?? null,
        body,
      };
      if (!earlier) {
        payments.push(payment);
        if (typeof key === 'string') byKey.set(key, payment);
      }
      if (fault === 'commit_then_drop') return req.socket.destroy();
      res.statusCode = 201;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ id: payment.id }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    payments,
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
