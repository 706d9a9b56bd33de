package dev.runlater;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Any;
import dev.runlater.v1.ErrorInfo;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import java.net.ServerSocket;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Each failure comes as the exception of its family, from the reason or else the status code. */
class ErrorFamiliesTest extends ServerTest {
  private static final Map<ErrorReason, Class<? extends RunlaterException>> FAMILY =
      Map.ofEntries(
          Map.entry(ErrorReason.QUEUE_NOT_FOUND, NotFoundException.class),
          Map.entry(ErrorReason.WORKFLOW_NOT_FOUND, NotFoundException.class),
          Map.entry(ErrorReason.INSTANCE_NOT_FOUND, NotFoundException.class),
          Map.entry(ErrorReason.INVALID_QUEUE_NAME, InvalidArgumentException.class),
          Map.entry(ErrorReason.INVALID_PRIORITY, InvalidArgumentException.class),
          Map.entry(ErrorReason.INVALID_ARGUMENT, InvalidArgumentException.class),
          Map.entry(ErrorReason.BODY_TOO_LARGE, ResourceExhaustedException.class),
          Map.entry(ErrorReason.BATCH_TOO_LARGE, ResourceExhaustedException.class),
          Map.entry(ErrorReason.SHUTTING_DOWN, UnavailableException.class),
          Map.entry(ErrorReason.NO_BROKER, UnavailableException.class),
          Map.entry(ErrorReason.CONFLICT, UnavailableException.class),
          Map.entry(ErrorReason.WORKFLOW_RULE, RunlaterException.class),
          Map.entry(ErrorReason.UNSUPPORTED, RunlaterException.class),
          Map.entry(ErrorReason.UNAUTHENTICATED, RunlaterException.class),
          Map.entry(ErrorReason.PERMISSION_DENIED, RunlaterException.class));

  /** A failure as the server sends it: a status with an ErrorInfo detail. */
  private static StatusRuntimeException failure(Status.Code code, dev.runlater.v1.ErrorReason r) {
    ErrorInfo info = ErrorInfo.newBuilder().setReason(r).setField("jobs[0].queue").build();
    return StatusProto.toStatusRuntimeException(
        com.google.rpc.Status.newBuilder()
            .setCode(code.value())
            .setMessage("no good")
            .addDetails(Any.pack(info))
            .build());
  }

  @ParameterizedTest
  @EnumSource(
      value = dev.runlater.v1.ErrorReason.class,
      names = {"ERROR_REASON_UNSPECIFIED", "UNRECOGNIZED"},
      mode = EnumSource.Mode.EXCLUDE)
  void everyReasonMapsToItsFamily(dev.runlater.v1.ErrorReason wire) {
    // The code is deliberately unrelated: the reason decides.
    RunlaterException e = Errors.from(failure(Status.Code.INTERNAL, wire), "h:1");
    ErrorReason reason = ProtoConvert.reason(wire);
    assertSame(FAMILY.get(reason), e.getClass(), wire.name());
    assertEquals(reason, e.reason());
    assertEquals("jobs[0].queue", e.field());
  }

  @Test
  void withoutAReasonTheCodeDecides() {
    Map<Status.Code, Class<? extends RunlaterException>> byCode =
        Map.of(
            Status.Code.NOT_FOUND, NotFoundException.class,
            Status.Code.INVALID_ARGUMENT, InvalidArgumentException.class,
            Status.Code.OUT_OF_RANGE, InvalidArgumentException.class,
            Status.Code.RESOURCE_EXHAUSTED, ResourceExhaustedException.class,
            Status.Code.UNAVAILABLE, UnavailableException.class,
            Status.Code.DEADLINE_EXCEEDED, DeadlineExceededException.class,
            Status.Code.INTERNAL, RunlaterException.class,
            Status.Code.CANCELLED, RunlaterException.class);
    byCode.forEach(
        (code, family) -> {
          RunlaterException e = Errors.from(code.toStatus().asRuntimeException(), "h:1");
          assertSame(family, e.getClass(), code.name());
          assertEquals(code, e.code());
          assertEquals(ErrorReason.UNSPECIFIED, e.reason());
        });
  }

  @Test
  void missingQueueIsNotFound() {
    NotFoundException e =
        assertThrows(
            NotFoundException.class, () -> client.getQueue(TestServer.queueName("missing")));
    assertEquals(ErrorReason.QUEUE_NOT_FOUND, e.reason());
  }

  @Test
  void badQueueNameIsInvalidArgument() {
    InvalidArgumentException e =
        assertThrows(
            InvalidArgumentException.class,
            () -> client.createQueue("no spaces allowed", QueueConfig.defaults()));
    assertEquals(ErrorReason.INVALID_QUEUE_NAME, e.reason());
  }

  @Test
  void unreachableServerIsUnavailableAndNamed() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort(); // free now, and nothing listens once closed
    }
    String target = "127.0.0.1:" + port;
    try (RunlaterClient nowhere = RunlaterClient.builder(target).build()) {
      UnavailableException e =
          assertThrows(UnavailableException.class, () -> nowhere.getQueue("any"));
      assertTrue(e.getMessage().contains(target), e.getMessage());
      assertInstanceOf(StatusRuntimeException.class, e.getCause());
    }
  }
}
