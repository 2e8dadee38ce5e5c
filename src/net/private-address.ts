import { BlockList, isIPv4, isIPv6 } from 'node:net';

/**
 * Addresses an outbound request must not reach in production (SSRF): everything
 * that is not ordinary public unicast. IANA special-purpose registries (RFC 6890 and updates).
 */
const NON_PUBLIC = new BlockList();
const V4: [string, number][] = [
  ['0.0.0.0', 8], // "this network", incl. the unspecified 0.0.0.0
  ['10.0.0.0', 8], // RFC 1918
  ['100.64.0.0', 10], // RFC 6598 carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, incl. cloud metadata 169.254.169.254
  ['172.16.0.0', 12], // RFC 1918
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // TEST-NET-1
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // RFC 1918
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // TEST-NET-2
  ['203.0.113.0', 24], // TEST-NET-3
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, incl. broadcast 255.255.255.255
];
const V6: [string, number][] = [
  ['::', 96], // unspecified ::, loopback ::1 and deprecated IPv4-compatible addresses
  ['64:ff9b:1::', 48], // local-use NAT64 (RFC 8215): an operator's own translator
  ['100::', 64], // discard-only
  ['2001::', 32], // Teredo: tunnels to an IPv4 address we cannot vet
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique-local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // deprecated site-local
  ['ff00::', 8], // multicast
];
for (const [net, prefix] of V4) NON_PUBLIC.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of V6) NON_PUBLIC.addSubnet(net, prefix, 'ipv6');

/** True for loopback, private, link-local, unique-local, CGNAT, multicast, reserved … and for anything that is not an IP address (fail closed). */
export function isPrivateAddress(address: string): boolean {
  const ip = address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''); // brackets, IPv6 zone id
  if (isIPv4(ip)) return NON_PUBLIC.check(ip, 'ipv4');
  if (!isIPv6(ip)) return true;
  if (NON_PUBLIC.check(ip, 'ipv6')) return true;
  // Addresses that carry an IPv4 address reach that address: vet it too.
  const embedded = embeddedIPv4(ipv6Bytes(ip));
  return embedded !== undefined && NON_PUBLIC.check(embedded, 'ipv4');
}

/** ::ffff:a.b.c.d (IPv4-mapped), 64:ff9b::a.b.c.d (NAT64), 2002:aabb:ccdd:: (6to4). */
function embeddedIPv4(b: number[]): string | undefined {
  const v4 = (at: number) => b.slice(at, at + 4).join('.');
  const zero = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  if (zero(0, 10) && b[10] === 0xff && b[11] === 0xff) return v4(12);
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b) return v4(12);
  if (b[0] === 0x20 && b[1] === 0x02) return v4(2);
  return undefined;
}

/** A valid IPv6 text (as isIPv6 accepts it) to its 16 bytes. */
function ipv6Bytes(ip: string): number[] {
  let text = ip.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1].split('.').map(Number);
    text = text.slice(0, dotted.index) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  return groups.flatMap((g) => {
    const n = parseInt(g, 16);
    return [n >> 8, n & 0xff];
  });
}
