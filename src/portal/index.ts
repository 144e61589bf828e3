/** The developer portal: sign-in, keys per environment, usage. Built on src/access. */
export { createPortal } from './portal-handler.js';
export type { Portal, PortalOptions } from './portal-handler.js';
export { mountPortal } from './mount.js';
export { SESSION_SECONDS, MAX_FAILED_SIGN_INS, LOCKOUT_SECONDS } from './sessions.js';
