import { BlockList, isIP, isIPv4 } from 'node:net';
import { CrosstabError, ErrorCode } from '../index.js';
import type { HandlerRequest } from './handler-types.js';
import { headerOf } from './headers.js';

/**
 * Which peers may tell the client's address (X-Forwarded-For) and scheme
 * (X-Forwarded-Proto): `false` none (the default), a list of addresses and CIDR ranges
 * (`10.0.0.7`, `172.28.0.0/24`, `fd00::/8`), or `true` any peer (only when nothing but the
 * proxy can reach the server).
 */
export type TrustedProxies = boolean | readonly string[];

/** A checked TrustedProxies: who is trusted, decided per peer address. */
export interface ProxyTrust {
  trusts(address: string): boolean;
  /** Whether more than the nearest hop can be trusted (a list: skip trusted hops right to left). */
  readonly listed: boolean;
}

const NONE: ProxyTrust = { trusts: () => false, listed: false };
const ANY: ProxyTrust = { trusts: () => true, listed: false };

/** The groups of an IPv6 address as 8 numbers (a dotted IPv4 tail becomes two groups). */
function groupsOf(address: string): number[] {
  let text = address;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::', 2) as [string, string | undefined];
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return groups.map((group) => Number.parseInt(group, 16));
}

/**
 * The IP address in `value` as written by a peer or a proxy: `1.2.3.4`, `1.2.3.4:5678`,
 * `2001:db8::1`, `[2001:db8::1]`, `[2001:db8::1]:443`, `fe80::1%eth0`; an IPv4-mapped IPv6
 * address (`::ffff:1.2.3.4`, `::ffff:102:304`) becomes the IPv4 address. IPv6 addresses come
 * back lower-case with leading zeros dropped. Undefined when it is no address.
 */
export function normalizeAddress(value: string): string | undefined {
  let text = value.trim();
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(text);
  if (bracketed) text = bracketed[1] as string;
  else if (/^\d{1,3}(\.\d{1,3}){3}:\d{1,5}$/.test(text)) text = text.slice(0, text.indexOf(':'));
  text = text.replace(/%[\w.-]+$/, '');
  if (isIPv4(text)) return text;
  if (isIP(text) !== 6) return undefined;
  const groups = groupsOf(text.toLowerCase());
  if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) {
    const [high = 0, low = 0] = groups.slice(6);
    return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  }
  return groups.map((group) => group.toString(16)).join(':');
}

/** Checks `trusted` (from an option named `option`) and returns who it trusts. */
export function proxyTrust(trusted: TrustedProxies | undefined, option = 'trustProxy'): ProxyTrust {
  if (trusted === undefined || trusted === false) return NONE;
  if (trusted === true) return ANY;
  if (!Array.isArray(trusted) || trusted.length === 0) {
    throw new CrosstabError(ErrorCode.invalidOption, `${option} must be true, false or a list of proxy addresses; got ${JSON.stringify(trusted)}.`, { field: option });
  }
  const list = new BlockList();
  for (const entry of trusted) {
    const [address = '', bits, extra] = String(entry).trim().split('/');
    const normal = normalizeAddress(address);
    const family = normal === undefined ? undefined : isIPv4(normal) ? 'ipv4' : 'ipv6';
    const prefix = bits === undefined ? undefined : /^\d{1,3}$/.test(bits) ? Number(bits) : Number.NaN;
    if (normal === undefined || extra !== undefined || Number.isNaN(prefix) || (prefix !== undefined && prefix > (family === 'ipv4' ? 32 : 128))) {
      throw new CrosstabError(ErrorCode.invalidOption, `${option}: ${JSON.stringify(entry)} is not an IP address or CIDR range.`, {
        field: option,
        hint: 'Give the proxy\'s own address as the replicas see it, e.g. 10.0.0.7 or 10.0.0.0/24 or fd00::/8, comma-separated.',
      });
    }
    if (prefix === undefined) list.addAddress(normal, family);
    else list.addSubnet(normal, prefix, family);
  }
  return { trusts: (address) => list.check(address, isIPv4(address) ? 'ipv4' : 'ipv6'), listed: true };
}

/** The first four groups of an IPv6 address: one host can take any address of its /64. */
function prefix64(address: string): string {
  return `${address.split(':').slice(0, 4).join(':')}::/64`;
}

/**
 * Who is calling, for counting failures per address: the peer's address, or, when the peer
 * is a trusted proxy, the address it appended to X-Forwarded-For. Entries are read right to
 * left; with a list of trusted proxies, entries that are themselves trusted proxies are
 * skipped (a chain of them); the first other entry is the client. Entries further left are
 * written by the client and prove nothing. IPv6 addresses count per /64.
 */
export function clientAddress(request: HandlerRequest, trust: ProxyTrust): string {
  const peer = normalizeAddress(request.remoteAddress ?? '');
  if (peer === undefined) return 'unknown';
  let address = peer;
  if (trust.trusts(peer)) {
    const forwarded = (headerOf(request.headers, 'x-forwarded-for') ?? '').split(',');
    for (let index = forwarded.length - 1; index >= 0; index--) {
      const entry = normalizeAddress(forwarded[index] as string);
      // A trusted proxy wrote something that is no address: count the proxy, not a free-form text.
      if (entry === undefined) break;
      address = entry;
      if (!trust.listed || !trust.trusts(entry)) break;
    }
  }
  return isIPv4(address) ? address : prefix64(address);
}

/**
 * The scheme the client used, as a trusted proxy reports it in X-Forwarded-Proto (a list when
 * several proxies added to it: the first entry is the outermost one's); undefined when the
 * peer is not trusted or says nothing.
 */
export function forwardedProto(request: HandlerRequest, trust: ProxyTrust): string | undefined {
  const peer = normalizeAddress(request.remoteAddress ?? '');
  if (peer === undefined || !trust.trusts(peer)) return undefined;
  const first = headerOf(request.headers, 'x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase();
  return first === '' ? undefined : first;
}
