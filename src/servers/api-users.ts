/**
 * Who may call the records API: users, each with the sha256 of their bearer
 * token and a role. The server never holds a token, only its hash.
 *
 * Format (a JSON file named by HANDRAIL_API_USERS, or the same JSON in HANDRAIL_API_USERS_JSON):
 *   { "ana":  { "token_sha256": "<64 hex digits>", "role": "user" },
 *     "ops":  { "token_sha256": "<64 hex digits>", "role": "root" } }
 * Hash a token: node -e "console.log(require('crypto').createHash('sha256').update(process.argv[1]).digest('hex'))" 'the-token'
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import { z } from 'zod';
import { LIMITS } from '../../contracts/limits';
import { RAIL_ACTOR } from '../../workflows/rail/escalation-record';

export const API_ROLES = ['user', 'root'] as const;
export type ApiRole = (typeof API_ROLES)[number];

/** A user name is an actor on records and part of idempotency keys (`api/<user>/<key>`):
 * the contracts' id characters, so no spaces, `:` or `/`. Never the rail's own name: a record
 * created by it is an escalation's, the only kind that decides a job. */
export const ApiUserName = z
  .string()
  .min(1)
  .max(LIMITS.id)
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.\-]*$/)
  .refine((name) => name !== RAIL_ACTOR, { message: `"${RAIL_ACTOR}" is the rail's name, not a user's` });

export const ApiUsersConfig = z.record(
  ApiUserName,
  z.strictObject({
    token_sha256: z
      .string()
      .regex(/^[0-9a-f]{64}$/, { message: 'must be 64 lowercase hex digits (sha256 of the token)' }),
    role: z.enum(API_ROLES),
  }),
);
export type ApiUsersConfig = z.infer<typeof ApiUsersConfig>;

export interface ApiUser {
  name: string;
  role: ApiRole;
}

export interface ApiUsers {
  /** The user whose token this is, or null. Compares against every user in constant time. */
  authenticate(token: string): ApiUser | null;
  has(name: string): boolean;
}

export function sha256Token(token: string): string {
  return crypto.createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Checks a users config and builds the authenticator. Two users with one token hash are refused. */
export function apiUsers(config: unknown): ApiUsers {
  const parsed = ApiUsersConfig.parse(config);
  const entries = Object.entries(parsed).map(([name, u]) => ({
    name,
    role: u.role,
    hash: Buffer.from(u.token_sha256, 'hex'),
  }));
  const seen = new Set<string>();
  for (const { name, hash } of entries) {
    const hex = hash.toString('hex');
    if (seen.has(hex)) throw new Error(`API users config: user ${name} shares a token hash with another user`);
    seen.add(hex);
  }
  return {
    authenticate(token) {
      const hash = crypto.createHash('sha256').update(token, 'utf8').digest();
      let found: ApiUser | null = null;
      // No early exit: every hash is compared, whoever matches.
      for (const entry of entries) {
        if (crypto.timingSafeEqual(hash, entry.hash) && !found) found = { name: entry.name, role: entry.role };
      }
      return found;
    },
    has: (name) => Object.hasOwn(parsed, name),
  };
}

/** Reads HANDRAIL_API_USERS (a file path) or HANDRAIL_API_USERS_JSON; one of them is required. */
export function loadApiUsers(env: NodeJS.ProcessEnv = process.env): ApiUsers {
  const file = env.HANDRAIL_API_USERS;
  const inline = env.HANDRAIL_API_USERS_JSON;
  if (file && inline) throw new Error('set HANDRAIL_API_USERS or HANDRAIL_API_USERS_JSON, not both');
  if (!file && !inline)
    throw new Error('no API users: set HANDRAIL_API_USERS (a JSON file) or HANDRAIL_API_USERS_JSON (docs/operate.md)');
  const source = file ? `file ${file}` : 'HANDRAIL_API_USERS_JSON';
  let json: unknown;
  try {
    json = JSON.parse(file ? fs.readFileSync(file, 'utf8') : inline!);
  } catch (error) {
    throw new Error(`API users config (${source}) is not readable JSON: ${(error as Error).message}`);
  }
  const checked = ApiUsersConfig.safeParse(json);
  if (!checked.success) throw new Error(`API users config (${source}) is invalid: ${z.prettifyError(checked.error)}`);
  return apiUsers(checked.data);
}
