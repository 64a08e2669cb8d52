/** @aexhq/brain-db/secrets: Sealed secrets, signed invocations and callback tokens. */
export {
  CALLBACK_TOKEN_TTL_MS,
  type CallbackRoute,
  callbackToken,
  verifyCallbackToken,
} from "../callback-token.js";
export { InvocationSigner } from "../invocation-signer.js";
export {
  loadOrCreateDevSecretKey,
  parseSecretKey,
  parseSecretKeys,
  SECRET_KEY_FILE,
  type Sealed,
  SecretBox,
} from "../secrets.js";
