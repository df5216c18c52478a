/**
 * The reference writer's system: an HTTP payments API of the usual SaaS shape (`POST /v1/payments`
 * answers the payment's id; `GET /v1/payments?client_reference=…` lists the payments made under a
 * client reference). The write key goes out twice, in the `Idempotency-Key` header for a system that
 * honours one and as the payment's `client_reference` for one that only stores it, so every
 * reconcile mode can use the same client.
 */
import { EffectRefused, type EffectRequest, type RemoteSystem } from './effect-ledger';

/** Answers that say the payment was not made and would not be made by sending it again. */
const REFUSALS = new Set([400, 401, 402, 403, 404, 422]);

export function httpPayments(baseUrl: string, timeoutMs = 5_000): RemoteSystem {
  const url = (path: string) => new URL(path, baseUrl).toString();
  return {
    async send({ key, body }: EffectRequest) {
      const response = await fetch(url('/v1/payments'), {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify({ ...(JSON.parse(body) as object), client_reference: key }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      const answer = await response.text();
      if (REFUSALS.has(response.status)) throw new EffectRefused(`HTTP ${response.status}: ${answer.slice(0, 200)}`);
      // Anything else (a 5xx, a 409 for a request still in flight) may have made the payment.
      if (!response.ok) throw new Error(`payments answered HTTP ${response.status}; the payment may have been made`);
      return { reference: paymentId(answer) };
    },
    async lookup(key: string) {
      const response = await fetch(url(`/v1/payments?client_reference=${encodeURIComponent(key)}`), {
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (!response.ok) throw new Error(`payments lookup answered HTTP ${response.status}`);
      const { data } = (await response.json()) as { data: { id: string }[] };
      return data[0] ? { reference: data[0].id } : null;
    },
  };
}

function paymentId(answer: string): string {
  const id = (JSON.parse(answer) as { id?: unknown }).id;
  if (typeof id !== 'string' || id.length === 0) throw new Error('payments answered no payment id');
  return id;
}
