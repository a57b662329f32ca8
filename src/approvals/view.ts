import { createHash } from 'node:crypto';
import type { ApprovalRecord } from './types.js';

/** Arguments larger than this (UTF-8 JSON bytes) are left out of a listing: a preview and a digest stand in. */
export const LISTED_ARGUMENTS_BYTES = 4096;
/** Characters of the arguments' JSON a listing shows in their place. */
const PREVIEW_CHARS = 512;

/** The public view of a record: the requester's claims stay server-side. */
export function approvalView(record: ApprovalRecord) {
  return {
    id: record.id,
    status: record.status,
    tenant: record.tenant,
    requester: record.requester.user,
    tool: record.call.name,
    callId: record.call.callId,
    arguments: record.call.boundArguments ?? record.call.arguments,
    modelArguments: record.call.arguments,
    createdAt: new Date(record.createdAt).toISOString(),
    expiresAt: new Date(record.expiresAt).toISOString(),
    ...(record.decidedBy ? { decidedBy: record.decidedBy } : {}),
    ...(record.decidedAt ? { decidedAt: new Date(record.decidedAt).toISOString() } : {}),
    ...(record.result ? { result: record.result } : {}),
  };
}

/**
 * A record as a listing shows it: its arguments inline while small; larger ones are replaced by their size,
 * SHA-256 and a preview, so a page stays small whatever the calls carry (`GET /v1/approvals/{id}` has them whole).
 */
export function listedApprovalView(record: ApprovalRecord) {
  const { arguments: bound, modelArguments, ...rest } = approvalView(record);
  const json = JSON.stringify(bound);
  const bytes = Math.max(Buffer.byteLength(json, 'utf8'), Buffer.byteLength(JSON.stringify(modelArguments), 'utf8'));
  if (bytes <= LISTED_ARGUMENTS_BYTES) return { ...rest, arguments: bound, modelArguments, argumentsBytes: bytes };
  return {
    ...rest,
    argumentsBytes: bytes,
    argumentsSha256: createHash('sha256').update(json).digest('hex'),
    argumentsPreview: json.slice(0, PREVIEW_CHARS),
  };
}
