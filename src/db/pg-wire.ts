/**
 * The few pieces of the Postgres wire protocol (v3) the embedded socket server needs to read:
 * frontend message framing, the startup packet, and ReadyForQuery in the backend's output.
 * https://www.postgresql.org/docs/current/protocol-message-formats.html
 */

const PROTOCOL_3 = 196608;
const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;

export type FrontendMessage =
  | { kind: 'encryption-request'; bytes: Buffer } // SSLRequest / GSSENCRequest: answered "N"
  | { kind: 'cancel' }
  | { kind: 'startup'; bytes: Buffer; params: Map<string, string> }
  | { kind: 'unsupported-startup' }
  | { kind: 'message'; type: string; bytes: Buffer };

/**
 * Splits the next complete frontend message off `buffer`; undefined while incomplete. Before
 * the startup packet, messages carry no type byte (protocol §55.2.1).
 */
export function nextFrontendMessage(
  buffer: Buffer,
  started: boolean,
): { message: FrontendMessage; rest: Buffer } | undefined {
  if (!started) {
    if (buffer.length < 8) return undefined;
    const length = buffer.readInt32BE(0);
    if (length < 8 || length > 10_000) return { message: { kind: 'unsupported-startup' }, rest: Buffer.alloc(0) };
    if (buffer.length < length) return undefined;
    const bytes = buffer.subarray(0, length);
    const rest = buffer.subarray(length);
    const code = buffer.readInt32BE(4);
    if (code === SSL_REQUEST || code === GSSENC_REQUEST)
      return { message: { kind: 'encryption-request', bytes }, rest };
    if (code === CANCEL_REQUEST) return { message: { kind: 'cancel' }, rest };
    if (code !== PROTOCOL_3) return { message: { kind: 'unsupported-startup' }, rest };
    return { message: { kind: 'startup', bytes: Buffer.from(bytes), params: startupParams(bytes) }, rest };
  }
  if (buffer.length < 5) return undefined;
  const length = 1 + buffer.readInt32BE(1);
  if (buffer.length < length) return undefined;
  return {
    message: { kind: 'message', type: String.fromCharCode(buffer[0]), bytes: Buffer.from(buffer.subarray(0, length)) },
    rest: buffer.subarray(length),
  };
}

function startupParams(bytes: Buffer): Map<string, string> {
  const parts = bytes.subarray(8).toString('utf8').split('\0');
  const params = new Map<string, string>();
  for (let i = 0; i + 1 < parts.length && parts[i]; i += 2) params.set(parts[i], parts[i + 1]);
  return params;
}

/** Follows backend output across chunks and reports the status byte of each ReadyForQuery ('I', 'T', 'E'). */
export class ReadyForQueryScanner {
  private header = Buffer.alloc(0);
  private remaining = 0; // bytes of the current message body still to skip
  private awaitingStatus = false;

  /** Feeds a chunk; returns the status of the last ReadyForQuery in it, if any. */
  feed(chunk: Uint8Array): string | undefined {
    let status: string | undefined;
    let i = 0;
    while (i < chunk.length) {
      if (this.remaining > 0) {
        if (this.awaitingStatus) {
          status = String.fromCharCode(chunk[i]);
          this.awaitingStatus = false;
        }
        const skip = Math.min(this.remaining, chunk.length - i);
        this.remaining -= skip;
        i += skip;
        continue;
      }
      const need = 5 - this.header.length;
      const take = chunk.subarray(i, i + need);
      this.header = Buffer.concat([this.header, take]);
      i += take.length;
      if (this.header.length < 5) break;
      this.remaining = this.header.readInt32BE(1) - 4;
      this.awaitingStatus = this.header[0] === 0x5a && this.remaining === 1; // 'Z'
      this.header = Buffer.alloc(0);
    }
    return status;
  }
}

/** A Sync message: ends an extended-protocol batch (and the error state it may be in). */
export const SYNC = Buffer.from([0x53, 0, 0, 0, 4]);

/** A simple Query message. */
export function queryMessage(sql: string): Buffer {
  const text = Buffer.from(`${sql}\0`, 'utf8');
  const header = Buffer.alloc(5);
  header[0] = 0x51; // 'Q'
  header.writeInt32BE(4 + text.length, 1);
  return Buffer.concat([header, text]);
}

/** An ErrorResponse, for refusing or ending a connection ourselves. */
export function errorResponse(severity: 'ERROR' | 'FATAL', code: string, message: string): Buffer {
  const fields = Buffer.from(`S${severity}\0V${severity}\0C${code}\0M${message}\0\0`, 'utf8');
  const header = Buffer.alloc(5);
  header[0] = 0x45; // 'E'
  header.writeInt32BE(4 + fields.length, 1);
  return Buffer.concat([header, fields]);
}
