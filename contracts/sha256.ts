/**
 * The sha256 of a text's UTF-8 bytes, as lowercase hex: what snapshot and entry addresses are
 * made of. Pure JS (@noble/hashes), so the rail computes the same addresses in workflow code as a
 * stage's worker does. The workflow bundle preloads this module (src/worker/bundle.ts): a
 * module evaluated per workflow run starts its hash code cold every run, about 10× slower.
 * Worker code hashes with node:crypto instead (src/worker/store/content.ts), to the same hex.
 */
import { sha256 } from '@noble/hashes/sha2';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils';

export const sha256Hex = (text: string): string => bytesToHex(sha256(utf8ToBytes(text)));
