import { isIPv6 } from 'node:net';
import type { HandlerRequest } from '../http/index.js';
import { headerOf } from '../http/index.js';

/** The first four groups of an IPv6 address: one host can take any address of its /64. */
function prefix64(address: string): string {
  const [head = '', tail] = address.split('::', 2) as [string, string | undefined];
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return `${groups.slice(0, 4).map((group) => group.toLowerCase().replace(/^0+(?=.)/, '')).join(':')}::/64`;
}

/**
 * Who is signing in, for throttling: the peer's address, or with `trustProxy` the address
 * the nearest proxy appended to X-Forwarded-For (the rightmost entry; entries further left
 * are written by the client and prove nothing). IPv6 addresses count per /64.
 */
export function clientAddress(request: HandlerRequest, trustProxy: boolean): string {
  let address = request.remoteAddress ?? '';
  if (trustProxy) {
    const forwarded = headerOf(request.headers, 'x-forwarded-for')?.split(',').at(-1)?.trim();
    if (forwarded) address = forwarded;
  }
  if (address.startsWith('::ffff:') && address.includes('.')) address = address.slice('::ffff:'.length);
  if (address === '') return 'unknown';
  return isIPv6(address) ? prefix64(address) : address.slice(0, 64);
}
