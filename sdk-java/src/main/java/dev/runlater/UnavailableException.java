package dev.runlater;

import io.grpc.Status;

/**
 * The server could not be reached or cannot serve the call now: reasons {@link
 * ErrorReason#SHUTTING_DOWN} and {@link ErrorReason#NO_BROKER}, or status {@code UNAVAILABLE}
 * without a reason (no connection). The message names the target. Retrying later, or on another
 * node, may work.
 */
public final class UnavailableException extends RunlaterException {
  private static final long serialVersionUID = 1L;

  /** Creates one; see {@link RunlaterException#RunlaterException}. */
  public UnavailableException(
      Status.Code code, ErrorReason reason, String field, String message, Throwable cause) {
    super(code, reason, field, message, cause);
  }
}
