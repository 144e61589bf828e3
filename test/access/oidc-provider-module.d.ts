// The parts of oidc-provider (which ships no types) that the SSO tests use.
declare module 'oidc-provider' {
  import type { Server } from 'node:http';
  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    listen(port: number, host?: string): Server;
  }
}
