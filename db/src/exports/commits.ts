/** @aexhq/brain-db/commits: Hearing of commits: the keys a NOTIFY carries, LISTEN, and the in-process feed. */
export { CommitFanout, type CommitFeed, type CommitHandler } from "../commit-feed.js";
export {
  type CommitKeys,
  decodeKeys,
  emptyKeys,
  encodeKeys,
  mergeKeys,
  originPrefix,
  Touch,
  touchOf,
} from "../commit-keys.js";
export { type CommitListener, channelFor, type LiveChannel, listenForCommits, liveChannelFor } from "../listener.js";
export { notifyLive } from "../ops/notify-live.js";
