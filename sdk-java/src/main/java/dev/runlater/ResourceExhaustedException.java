package dev.runlater;

import io.grpc.Status;

/**
 * Too much at once: reasons {@link ErrorReason#BODY_TOO_LARGE} and {@link
 * ErrorReason#BATCH_TOO_LARGE}, or status {@code RESOURCE_EXHAUSTED} without a reason (for example
 * a message over the client's size limit). Split the batch or shrink the body.
 */
public final class ResourceExhaustedException extends RunlaterException {
  private static final long serialVersionUID = 1L;

  /** Creates one; see {@link RunlaterException#RunlaterException}. */
  public ResourceExhaustedException(
      Status.Code code, ErrorReason reason, String field, String message, Throwable cause) {
    super(code, reason, field, message, cause);
  }
}
