import { createHash } from 'node:crypto';
import type { ApprovalRecord, ArgumentsSummary } from './types.js';

/** Arguments larger than this (UTF-8 JSON bytes) are left out of a listing: a preview and a digest stand in. */
export const LISTED_ARGUMENTS_BYTES = 4096;
/** Characters of the arguments' JSON a listing shows in their place. */
const PREVIEW_CHARS = 512;

/** The record's arguments as a summary when they are larger than a listing shows, else undefined. */
export function argumentsSummaryOf(record: ApprovalRecord): ArgumentsSummary | undefined {
  if (record.call.argumentsSummary) return record.call.argumentsSummary;
  const json = JSON.stringify(record.call.boundArguments ?? record.call.arguments);
  const bytes = Math.max(Buffer.byteLength(json, 'utf8'), Buffer.byteLength(JSON.stringify(record.call.arguments), 'utf8'));
  if (bytes <= LISTED_ARGUMENTS_BYTES) return undefined;
  return { bytes, sha256: createHash('sha256').update(json).digest('hex'), preview: json.slice(0, PREVIEW_CHARS) };
}

/**
 * What the store keeps of a record: a decided one drops arguments larger than a listing shows (nothing
 * will run them again), keeping their summary, so the records kept a day after their decision stay small.
 */
export function storedRecord(record: ApprovalRecord): ApprovalRecord {
  if (record.status === 'pending' || record.call.argumentsSummary) return record;
  const summary = argumentsSummaryOf(record);
  if (!summary) return record;
  const { boundArguments: _dropped, ...call } = record.call;
  return { ...record, call: { ...call, arguments: {}, argumentsSummary: summary } };
}

const summaryFields = (summary: ArgumentsSummary) => ({ argumentsBytes: summary.bytes, argumentsSha256: summary.sha256, argumentsPreview: summary.preview });

/** A record's fields every view shows: the requester's claims stay server-side. */
function baseView(record: ApprovalRecord) {
  return {
    id: record.id,
    status: record.status,
    tenant: record.tenant,
    requester: record.requester.user,
    tool: record.call.name,
    callId: record.call.callId,
    createdAt: new Date(record.createdAt).toISOString(),
    expiresAt: new Date(record.expiresAt).toISOString(),
    ...(record.decidedBy ? { decidedBy: record.decidedBy } : {}),
    ...(record.decidedAt ? { decidedAt: new Date(record.decidedAt).toISOString() } : {}),
    ...(record.result ? { result: record.result } : {}),
  };
}

const inlineArguments = (record: ApprovalRecord) => ({ arguments: record.call.boundArguments ?? record.call.arguments, modelArguments: record.call.arguments });

/** The public view of a record: its arguments whole, or the summary a decided record kept of large ones. */
export function approvalView(record: ApprovalRecord) {
  const { argumentsSummary } = record.call;
  return { ...baseView(record), ...(argumentsSummary ? summaryFields(argumentsSummary) : inlineArguments(record)) };
}

/**
 * A record as a listing shows it: its arguments inline while small; larger ones are replaced by their size,
 * SHA-256 and a preview, so a page stays small whatever the calls carry (`GET /v1/approvals/{id}` has them
 * whole while the call waits).
 */
export function listedApprovalView(record: ApprovalRecord) {
  const summary = argumentsSummaryOf(record);
  if (summary) return { ...baseView(record), ...summaryFields(summary) };
  const inline = inlineArguments(record);
  const bytes = Math.max(Buffer.byteLength(JSON.stringify(inline.arguments), 'utf8'), Buffer.byteLength(JSON.stringify(inline.modelArguments), 'utf8'));
  return { ...baseView(record), ...inline, argumentsBytes: bytes };
}
