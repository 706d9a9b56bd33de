package dev.runlater;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;

/** Turns transport failures into {@link RunlaterException}. */
final class Errors {
  private Errors() {}

  /**
   * Reads the code and message from the gRPC status and, if the server attached one, the {@code
   * runlater.v1.ErrorInfo} detail from the {@code grpc-status-details-bin} trailer.
   */
  static RunlaterException from(StatusRuntimeException e) {
    Status status = e.getStatus();
    ErrorReason reason = ErrorReason.UNSPECIFIED;
    String field = "";
    com.google.rpc.Status details = StatusProto.fromThrowable(e);
    if (details != null) {
      for (Any any : details.getDetailsList()) {
        if (any.is(runlater.v1.Errors.ErrorInfo.class)) {
          try {
            runlater.v1.Errors.ErrorInfo info = any.unpack(runlater.v1.Errors.ErrorInfo.class);
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
    return new RunlaterException(status.getCode(), reason, field, message, e);
  }
}
