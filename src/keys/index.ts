/**
 * The contracts between the REST adapter (src/http) and the stores behind it (a key file in
 * src/http, the access database in src/access): API key records, where keys are looked up,
 * where usage goes. Both sides import them from here.
 */
export { API_KEY_PATTERN, generateApiKey, generateKeyId, hashApiKey, sha256 } from './api-key.js';
export type { ApiKeyRecord } from './api-key.js';
export type { AdmissionRefusal, KeyStore } from './key-store.js';
export type { DurableWriteListener, DurableWriteStats, UsageRecord, UsageSink, VoidReason } from './usage-sink.js';
export { mayEdit } from './audience-store.js';
export type { AudienceCheck, AudienceInput, AudienceRecord, AudienceRefusal, AudienceStore, AudienceViewer } from './audience-store.js';
