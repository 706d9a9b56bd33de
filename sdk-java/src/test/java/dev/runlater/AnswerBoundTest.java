package dev.runlater;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.CodedOutputStream;
import dev.runlater.v1.ListQueuesRequest;
import dev.runlater.v1.ListQueuesResponse;
import dev.runlater.v1.QueueServiceGrpc;
import io.grpc.InsecureServerCredentials;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The client accepts an answer of exactly {@link RunlaterClient#MAX_INBOUND_BYTES} (64 MiB) and
 * refuses one a byte larger with RESOURCE_EXHAUSTED, as the TypeScript and Python SDKs do. A fake
 * QueueService on loopback answers ListQueues with one queue whose name pads the answer to the size
 * under test; no runlater server is needed.
 */
class AnswerBoundTest {
  /** The answer the fake server gives next; each test sets it before its call. */
  private static volatile ListQueuesResponse answer = ListQueuesResponse.getDefaultInstance();

  /**
   * What gRPC logs, by design, when the client drops the oversized answer mid-stream: the client
   * about the frames still arriving, the fake server about the frames it can no longer write. Held
   * here (java.util.logging keeps loggers weakly) and muted for this class only.
   */
  private static final List<Logger> NOISY =
      List.of(
          Logger.getLogger("io.grpc.internal.AbstractClientStream"),
          Logger.getLogger("io.grpc.netty.shaded.io.grpc.netty.NettyServerHandler"));

  private static Server server;
  private static RunlaterClient client;

  @BeforeAll
  static void start() throws Exception {
    NOISY.forEach(logger -> logger.setLevel(Level.SEVERE));
    server =
        NettyServerBuilder.forAddress(
                new InetSocketAddress("127.0.0.1", 0), InsecureServerCredentials.create())
            .addService(
                new QueueServiceGrpc.QueueServiceImplBase() {
                  @Override
                  public void listQueues(
                      ListQueuesRequest request, StreamObserver<ListQueuesResponse> out) {
                    out.onNext(answer);
                    out.onCompleted();
                  }
                })
            .build()
            .start();
    // env(Map.of()): no RUNLATER_TOKEN or TLS variable from the environment applies here.
    client = RunlaterClient.builder("127.0.0.1:" + server.getPort()).env(Map.of()).build();
  }

  @AfterAll
  static void stop() throws InterruptedException {
    try {
      if (client != null) {
        client.close();
      }
    } finally {
      if (server != null) {
        server.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
      }
      NOISY.forEach(logger -> logger.setLevel(null));
    }
  }

  /** Length of the name that makes {@link #answerOf} exactly {@code bytes} long. */
  private static int nameLength(int bytes) {
    int name = Math.max(0, bytes - 12);
    while (answerSize(name) < bytes) {
      name++;
    }
    assertEquals(bytes, answerSize(name), "no name length gives exactly " + bytes + " bytes");
    return name;
  }

  /** Serialized size of a ListQueuesResponse holding one queue with only a name of {@code n}. */
  private static int answerSize(int n) {
    int queue = 1 + CodedOutputStream.computeUInt32SizeNoTag(n) + n; // field 1 of Queue
    return 1 + CodedOutputStream.computeUInt32SizeNoTag(queue) + queue; // field 1 of the answer
  }

  /** A ListQueuesResponse of exactly {@code bytes} serialized bytes: one queue, a long name. */
  private static ListQueuesResponse answerOf(int bytes) {
    String name = "q".repeat(nameLength(bytes));
    ListQueuesResponse r =
        ListQueuesResponse.newBuilder()
            .addQueues(dev.runlater.v1.Queue.newBuilder().setName(name))
            .build();
    assertEquals(bytes, r.getSerializedSize());
    return r;
  }

  @Test
  void answerOfExactlyTheBoundIsAccepted() {
    int bound = RunlaterClient.MAX_INBOUND_BYTES;
    assertEquals(64 * 1024 * 1024, bound);
    answer = answerOf(bound);
    try {
      List<Queue> queues = client.listQueues();
      assertEquals(1, queues.size());
      // Two tags of 1 byte and two 4-byte length varints: the name is the rest.
      assertEquals(bound - 10, queues.get(0).name().length());
    } finally {
      answer = ListQueuesResponse.getDefaultInstance();
    }
  }

  @Test
  void answerOneByteOverTheBoundIsResourceExhausted() {
    int over = RunlaterClient.MAX_INBOUND_BYTES + 1;
    answer = answerOf(over);
    try {
      ResourceExhaustedException e =
          assertThrows(ResourceExhaustedException.class, client::listQueues);
      assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.code());
      assertEquals(ErrorReason.UNSPECIFIED, e.reason());
      assertInstanceOf(StatusRuntimeException.class, e.getCause());
      assertTrue(
          e.getMessage().contains(String.valueOf(RunlaterClient.MAX_INBOUND_BYTES)),
          e.getMessage());
    } finally {
      answer = ListQueuesResponse.getDefaultInstance();
    }
    // The refusal costs that call only: the channel still answers the next one.
    assertEquals(List.of(), client.listQueues());
  }
}
