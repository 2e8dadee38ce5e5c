import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { lookup } from 'node:dns/promises';
import type { LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import tls from 'node:tls';
import type { Config } from '../config';
import { isPrivateAddress } from './private-address';

/** A response read to the end (within the size cap). Redirects are returned as they are. */
export interface OutboundResponse {
  status: number;
  headers: Headers;
  body: string;
}

export type OutboundFailure = 'refused' | 'timeout' | 'too_large' | 'network' | 'bad_url';

/** Why an outbound request failed. The message names the reason and host only: never headers or bodies (they carry tokens). */
export class OutboundRequestError extends Error {
  constructor(
    readonly reason: OutboundFailure,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'OutboundRequestError';
  }
}

export interface OutboundFetchOptions {
  /** Loopback, private, link-local … targets: allowed in development and tests only. */
  allowPrivateTargets: boolean;
  /** Covers DNS, connect and the whole response. */
  timeoutMs?: number;
  maxResponseBytes?: number;
  /** PEM certificate authorities trusted for https besides the system's (OUTBOUND_CA_FILE; in tests, a local server's self-signed one). */
  ca?: string;
}

export interface OutboundInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

export type OutboundFetch = (url: string, init?: OutboundInit) => Promise<OutboundResponse>;

const DEFAULT_TIMEOUT_MS = 5000;
const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;

/**
 * The one way the provider calls other servers on its own (back-channel logout, upstream
 * discovery/JWKS/token/userinfo, client metadata documents; never logo URLs, which the browser loads): SSRF guard, no redirects, a timeout and a size cap.
 * Rejects with OutboundRequestError.
 */
export function createOutboundFetch(options: OutboundFetchOptions): OutboundFetch {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  return async (url, init = {}) => {
    const target = parseTarget(url); // throws inside the async function: a rejection, as for every other failure
    // One deadline over DNS, connect and the whole body; a slow DNS answer must not start a late request.
    const deadline = new AbortController();
    const timer = setTimeout(
      () =>
        deadline.abort(
          new OutboundRequestError('timeout', `${target.host}: no complete answer within ${timeoutMs} ms`),
        ),
      timeoutMs,
    );
    try {
      const addresses = await untilAborted(
        resolveTarget(target.hostname, options.allowPrivateTargets),
        deadline.signal,
      );
      return await send(target.url, addresses, init, maxBytes, deadline.signal, options.ca);
    } finally {
      clearTimeout(timer);
    }
  };
}

/** From config: private targets allowed unless production, or when ALLOW_PRIVATE_NETWORK_TARGETS=true; a caller may set tighter limits. */
export function outboundFetchFromConfig(
  config: Config,
  limits: { timeoutMs?: number; maxResponseBytes?: number } = {},
): OutboundFetch {
  return createOutboundFetch({
    ...limits,
    allowPrivateTargets: !config.isProduction || config.allowPrivateNetworkTargets,
    // Read when the services are built, at start: a missing file stops the start rather than a request.
    ...(config.outboundCaFile === undefined ? {} : { ca: readFileSync(config.outboundCaFile, 'utf8') }),
  });
}

interface Target {
  url: URL;
  /** Without IPv6 brackets. */
  hostname: string;
  host: string;
}

function parseTarget(raw: string): Target {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundRequestError('bad_url', 'not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new OutboundRequestError('bad_url', `scheme ${url.protocol} is not http or https`);
  // Credentials in a URL end up in logs and proxies; callers send them in headers instead.
  if (url.username || url.password) throw new OutboundRequestError('bad_url', 'URL carries credentials');
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  if (!hostname) throw new OutboundRequestError('bad_url', 'URL has no host');
  return { url, hostname, host: url.host };
}

/** Every address the name resolves to is checked: one private answer refuses the whole name. */
async function resolveTarget(hostname: string, allowPrivate: boolean): Promise<LookupAddress[]> {
  let addresses: LookupAddress[];
  if (isIP(hostname)) {
    addresses = [{ address: hostname, family: isIP(hostname) }];
  } else {
    try {
      addresses = await lookup(hostname, { all: true, verbatim: true });
    } catch (cause) {
      throw new OutboundRequestError('network', `${hostname}: name not resolved`, { cause });
    }
    if (addresses.length === 0) throw new OutboundRequestError('network', `${hostname}: name not resolved`);
  }
  if (!allowPrivate) {
    const bad = addresses.find((a) => isPrivateAddress(a.address));
    if (bad) {
      const what =
        bad.address === hostname ? 'is not a public address' : `resolves to a non-public address (${bad.address})`;
      throw new OutboundRequestError('refused', `${hostname} ${what}`);
    }
  }
  return addresses;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

function send(
  url: URL,
  addresses: LookupAddress[],
  init: OutboundInit,
  maxBytes: number,
  signal: AbortSignal,
  ca: string | undefined,
): Promise<OutboundResponse> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const headers: Record<string, string | number> = { ...init.headers };
    if (init.body !== undefined) headers['content-length'] = Buffer.byteLength(init.body);
    const method = (init.method ?? 'GET').toUpperCase();
    let request: http.ClientRequest;
    try {
      request = (url.protocol === 'https:' ? https : http).request(url, {
        method,
        headers,
        // A fresh connection each time: a pooled socket must not carry one caller's vetted address to another.
        agent: false,
        ...(ca === undefined ? {} : { ca: [...tls.rootCertificates, ca] }),
        // Connect to the addresses vetted above, never a second DNS answer (DNS rebinding);
        // TLS SNI, certificate check and Host stay on the URL's host name.
        lookup: (_host: string, opts: { all?: boolean }, callback: LookupCallback) => {
          if (opts.all) callback(null, addresses);
          else callback(null, addresses[0].address, addresses[0].family);
        },
      });
    } catch (cause) {
      // node:http validates the method and header values before sending anything
      return reject(
        new OutboundRequestError('network', `${url.host}: request not sent (invalid method or header)`, { cause }),
      );
    }
    const fail = (err: OutboundRequestError) => {
      request.destroy(err);
      reject(err);
    };
    signal.addEventListener('abort', () => fail(signal.reason), { once: true });
    request.on('error', (cause) => {
      reject(
        cause instanceof OutboundRequestError
          ? cause
          : new OutboundRequestError(
              'network',
              `${url.host}: ${(cause as NodeJS.ErrnoException).code ?? 'request failed'}`,
              { cause },
            ),
      );
    });
    request.on('response', (res) => {
      const declared = Number(res.headers['content-length']);
      if (method !== 'HEAD' && declared > maxBytes) return fail(tooLarge(url, maxBytes));
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) return fail(tooLarge(url, maxBytes));
        chunks.push(chunk);
      });
      const interrupted = (cause?: unknown) =>
        reject(new OutboundRequestError('network', `${url.host}: response interrupted`, { cause }));
      res.on('error', interrupted);
      res.on('close', () => res.complete || interrupted());
      res.on('end', () => {
        resolve({
          status: res.statusCode ?? 0,
          headers: toHeaders(res.headers),
          body: Buffer.concat(chunks).toString('utf8'),
        });
      });
    });
    request.end(init.body);
  });
}

/** Rejects with the signal's reason as soon as it aborts (a DNS lookup cannot be cancelled, only abandoned). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
    work.then(resolve, reject);
  });
}

function tooLarge(url: URL, maxBytes: number): OutboundRequestError {
  return new OutboundRequestError('too_large', `${url.host}: response larger than ${maxBytes} bytes`);
}

function toHeaders(raw: http.IncomingHttpHeaders): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  return headers;
}
