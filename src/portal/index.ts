/** The developer portal: sign-in, keys per environment, usage. Built on src/access. */
export { createPortal } from './portal-handler.js';
export type { Portal, PortalOptions } from './portal-handler.js';
export { mountPortal } from './mount.js';
export { SESSION_SECONDS, MAX_FAILED_SIGN_INS, LOCKOUT_SECONDS } from './sessions.js';
export { SignInThrottle, MAX_SIGN_IN_FAILURES_PER_ADDRESS, SIGN_IN_WINDOW_SECONDS } from './sign-in-throttle.js';
export type { SignInThrottleOptions } from './sign-in-throttle.js';
