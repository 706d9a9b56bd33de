package dev.runlater;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import dev.runlater.v1.ErrorInfo;
import io.grpc.Status;
import io.grpc.netty.shaded.io.netty.handler.ssl.NotSslRecordException;
import io.grpc.protobuf.StatusProto;
import javax.net.ssl.SSLException;

/** Turns transport failures into {@link RunlaterException} and its family subclasses. */
final class Errors {
  private Errors() {}

  /**
   * Reads the code and message from the gRPC status of {@code t} and, if the server attached one,
   * the {@code runlater.v1.ErrorInfo} detail from the {@code grpc-status-details-bin} trailer.
   *
   * @param target the server the call went to, named in UNAVAILABLE messages (which server could
   *     not be reached is the first thing to know)
   */
  static RunlaterException from(Throwable t, String target) {
    Status status = Status.fromThrowable(t);
    ErrorReason reason = ErrorReason.UNSPECIFIED;
    String field = "";
    com.google.rpc.Status details = StatusProto.fromThrowable(t);
    if (details != null) {
      for (Any any : details.getDetailsList()) {
        if (any.is(ErrorInfo.class)) {
          try {
            ErrorInfo info = any.unpack(ErrorInfo.class);
            reason = ProtoConvert.reason(info.getReason());
            field = info.getField();
          } catch (InvalidProtocolBufferException ignored) {
            // A garbled detail should not hide the status itself.
          }
          break;
        }
      }
    }
    String message = status.getDescription() == null ? "" : status.getDescription();
    if (status.getCode() == Status.Code.UNAVAILABLE) {
      String tls = tlsFailure(t);
      message = "runlater server " + target + " unavailable: " + (tls != null ? tls : message);
    }
    return of(status.getCode(), reason, field, message, t);
  }

  /**
   * What went wrong in TLS, if that is why the call failed; else null. gRPC describes these only as
   * "io exception" or "ssl exception"; the root of the chain says what to fix ("unable to find
   * valid certification path to requested target", "...CERTIFICATE_REQUIRED", ...).
   */
  private static String tlsFailure(Throwable t) {
    Throwable tls = t;
    while (tls != null && !(tls instanceof SSLException)) {
      tls = tls.getCause();
    }
    if (tls == null) {
      return null;
    }
    Throwable root = tls;
    while (root.getCause() != null) {
      root = root.getCause();
    }
    if (root instanceof NotSslRecordException) {
      // Its message is a hex dump of what came back instead (an HTTP/1.1 error, say).
      return "TLS handshake failed: the server did not answer in TLS (is it serving plaintext?"
          + " then use http://)";
    }
    return "TLS handshake failed: "
        + (root.getMessage() != null ? root.getMessage() : root.getClass().getSimpleName());
  }

  /** The family's exception: by reason (an exhaustive switch), else by status code. */
  static RunlaterException of(
      Status.Code code, ErrorReason reason, String field, String message, Throwable cause) {
    return switch (reason) {
      case QUEUE_NOT_FOUND, WORKFLOW_NOT_FOUND, INSTANCE_NOT_FOUND ->
          new NotFoundException(code, reason, field, message, cause);
      case INVALID_QUEUE_NAME, INVALID_PRIORITY, INVALID_ARGUMENT ->
          new InvalidArgumentException(code, reason, field, message, cause);
      case BODY_TOO_LARGE, BATCH_TOO_LARGE ->
          new ResourceExhaustedException(code, reason, field, message, cause);
      case SHUTTING_DOWN, NO_BROKER, CONFLICT ->
          new UnavailableException(code, reason, field, message, cause);
      case WORKFLOW_RULE, UNSUPPORTED, UNAUTHENTICATED, PERMISSION_DENIED ->
          new RunlaterException(code, reason, field, message, cause);
      case UNSPECIFIED -> ofCode(code, field, message, cause);
    };
  }

  private static RunlaterException ofCode(
      Status.Code code, String field, String message, Throwable cause) {
    ErrorReason none = ErrorReason.UNSPECIFIED;
    return switch (code) {
      case NOT_FOUND -> new NotFoundException(code, none, field, message, cause);
      case INVALID_ARGUMENT, OUT_OF_RANGE ->
          new InvalidArgumentException(code, none, field, message, cause);
      case RESOURCE_EXHAUSTED -> new ResourceExhaustedException(code, none, field, message, cause);
      case UNAVAILABLE -> new UnavailableException(code, none, field, message, cause);
      case DEADLINE_EXCEEDED -> new DeadlineExceededException(code, none, field, message, cause);
      default -> new RunlaterException(code, none, field, message, cause);
    };
  }
}
