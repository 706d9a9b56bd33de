package dev.runlater;

/**
 * Machine-readable reason the server attaches to an error (mirrors {@code
 * runlater.v1.ErrorReason}).
 */
public enum ErrorReason {
  /** No particular reason, or none was attached. */
  UNSPECIFIED,
  /** The named queue does not exist. */
  QUEUE_NOT_FOUND,
  /** A queue name is empty, too long or has characters other than letters, digits, underscores. */
  INVALID_QUEUE_NAME,
  /** A priority outside 1..priorities. */
  INVALID_PRIORITY,
  /** A body larger than the queue's max_body_bytes. */
  BODY_TOO_LARGE,
  /** Too many items in one request. */
  BATCH_TOO_LARGE,
  /** Any other invalid field. */
  INVALID_ARGUMENT,
  /** The server is shutting down; retry on another node or later. */
  SHUTTING_DOWN,
  /** No broker is alive to hand out the queue's jobs; enqueues still work. Retry later. */
  NO_BROKER,
  /** The named workflow (or version of it) does not exist. */
  WORKFLOW_NOT_FOUND,
  /** The named workflow instance does not exist (or was deleted after its retention). */
  INSTANCE_NOT_FOUND,
  /** The instance's state does not allow the request (ended, no such input, job or run). */
  WORKFLOW_RULE,
  /** What the call changes was changed by others every time it tried; retry. */
  CONFLICT,
  /** The server's store does not offer this feature. */
  UNSUPPORTED,
  /** No token, or an unknown, expired or revoked one. */
  UNAUTHENTICATED,
  /** The token lacks the scope the call needs, or may not act on the queue it names. */
  PERMISSION_DENIED
}
