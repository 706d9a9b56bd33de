package dev.runlater;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/quickstart-java.md, run as written: the blocks between its quickstart markers, in order, in
 * an empty directory, against a server of its own ({@code --store memory}). A {@code java} or
 * {@code xml} block is written to the file its first line names; a {@code sh} block runs in bash,
 * and the one that "runs until Ctrl-C" gets a SIGINT once the jobs are done, as a user would send
 * it.
 *
 * <p>The page's own {@code mvn install} installs the SDK, from a copy of the checkout, into a Maven
 * home made for the test ({@code MAVEN_OPTS=-Duser.home=...}): the project then resolves {@code
 * runlater-sdk} by its coordinates from a local repository that held nothing of runlater before.
 * This build's repository serves every other artifact as a read-only {@code file://} repository, so
 * nothing is downloaded twice.
 */
class QuickstartTest {
  private static final Path REPO = Path.of("").toAbsolutePath().getParent();
  private static final Duration MAVEN_TIMEOUT = Duration.ofMinutes(8);

  /** One fenced block of the page: its language and text. */
  private record Block(String lang, String text) {}

  private static List<Block> blocks() throws IOException {
    String page = Files.readString(REPO.resolve("docs/quickstart-java.md"));
    Matcher section =
        Pattern.compile("<!-- quickstart:start -->(.*?)<!-- quickstart:end -->", Pattern.DOTALL)
            .matcher(page);
    assertTrue(section.find(), "docs/quickstart-java.md has no quickstart markers");
    List<Block> blocks = new ArrayList<>();
    Matcher fence =
        Pattern.compile("```(\\w+)\n(.*?)```", Pattern.DOTALL).matcher(section.group(1));
    while (fence.find()) {
      blocks.add(new Block(fence.group(1), fence.group(2)));
    }
    return blocks;
  }

  @Test
  void runsTheJavaQuickstartAsWritten(@TempDir Path tmp) throws Exception {
    Path checkout = copyCheckout(tmp.resolve("runlater"));
    Path home = mavenHome(tmp.resolve("home"));
    Path project = Files.createDirectories(tmp.resolve("project"));
    List<String> outputs = new ArrayList<>();
    try (TestServer.Started server = TestServer.start("quickstart", List.of(), Map.of());
        RunlaterClient client = RunlaterClient.builder(server.address()).build()) {
      Map<String, String> env =
          Map.of(
              "RUNLATER_URL", "http://" + server.address(),
              "RUNLATER_HOME", checkout.toString(),
              "MAVEN_OPTS", "-Duser.home=" + home);
      for (Block block : blocks()) {
        switch (block.lang()) {
          case "java", "xml" -> write(project, block);
          case "sh" ->
              outputs.add(
                  block.text().contains("runs until Ctrl-C")
                      ? runUntilJobsAreDone(block, project, env, tmp, client)
                      : run(block, project, env, tmp));
          default -> throw new AssertionError("a block of an unknown kind: " + block.lang());
        }
      }
      List<String[]> enqueued = new ArrayList<>();
      Matcher m = Pattern.compile("(?m)^enqueued (\\S+) for (\\S+)$").matcher(outputs.get(1));
      while (m.find()) {
        enqueued.add(new String[] {m.group(1), m.group(2)});
      }
      assertEquals(
          List.of("ada@example.com", "grace@example.com", "linus@example.invalid"),
          enqueued.stream().map(e -> e[1]).toList(),
          outputs.get(1));
      String worker = outputs.get(2);
      assertTrue(worker.contains("sending to ada@example.com"), worker);
      assertTrue(worker.contains("worker stopped"), worker);
      List<Job> jobs = client.getJobs(enqueued.stream().map(e -> e[0]).toList(), false);
      assertEquals(
          List.of(
              "SUCCEEDED sent to ada@example.com",
              "SUCCEEDED sent to grace@example.com",
              "FAILED cannot deliver to linus@example.invalid"),
          jobs.stream().map(j -> j.state() + " " + j.customStatus()).toList());
    }
    assertPublishedArtifact(home.resolve(".m2/repository/dev/runlater/runlater-sdk"));
  }

  /** What the install put in the local repository: the three jars, only the public protocol. */
  private static void assertPublishedArtifact(Path artifact) throws IOException {
    Path version;
    try (Stream<Path> versions = Files.list(artifact)) {
      version = versions.filter(Files::isDirectory).findFirst().orElseThrow();
    }
    String base = "runlater-sdk-" + version.getFileName();
    for (String jar : List.of(".jar", "-sources.jar", "-javadoc.jar")) {
      assertTrue(Files.isRegularFile(version.resolve(base + jar)), base + jar + " installed");
    }
    try (JarFile jar = new JarFile(version.resolve(base + ".jar").toFile())) {
      assertEquals(
          "dev.runlater", jar.getManifest().getMainAttributes().getValue("Automatic-Module-Name"));
      assertTrue(jar.getEntry("dev/runlater/v1/EnqueueRequest.class") != null);
      List<String> internal =
          jar.stream()
              .map(e -> e.getName())
              .filter(n -> n.contains("testing") || n.contains("cluster/"))
              .toList();
      assertEquals(List.of(), internal, "internal protos are not published");
    }
  }

  /** The parts of the checkout the SDK's build reads: the protos and the SDK's main sources. */
  private static Path copyCheckout(Path to) throws IOException {
    for (String part : List.of("proto", "sdk-java/pom.xml", "sdk-java/src/main")) {
      Path from = REPO.resolve(part);
      try (Stream<Path> files = Files.walk(from)) {
        for (Path f : files.filter(Files::isRegularFile).toList()) {
          Path target = to.resolve(REPO.relativize(f));
          Files.createDirectories(target.getParent());
          Files.copy(f, target);
        }
      }
    }
    return to;
  }

  /**
   * A user's Maven home ({@code ~/.m2}) whose settings add this build's repository as a remote one
   * for releases only, so the SDK's snapshot can come from nowhere but the page's install.
   */
  private static Path mavenHome(Path home) throws IOException {
    String url = Path.of(System.getProperty("runlater.localRepository")).toUri().toString();
    String repository =
        "<id>build</id><url>"
            + url
            + "</url><releases><checksumPolicy>ignore</checksumPolicy></releases>"
            + "<snapshots><enabled>false</enabled></snapshots>";
    String settings =
        "<settings><profiles><profile><id>build</id>"
            + "<repositories><repository>"
            + repository
            + "</repository></repositories>"
            + "<pluginRepositories><pluginRepository>"
            + repository
            + "</pluginRepository></pluginRepositories>"
            + "</profile></profiles>"
            + "<activeProfiles><activeProfile>build</activeProfile></activeProfiles></settings>\n";
    Files.createDirectories(home.resolve(".m2"));
    Files.writeString(home.resolve(".m2/settings.xml"), settings);
    return home;
  }

  private static void write(Path project, Block block) throws IOException {
    Matcher name = Pattern.compile("^(?://|<!--) (\\S+)(?: -->)?\n").matcher(block.text());
    assertTrue(name.find(), "a " + block.lang() + " block must start with its file name");
    Path file = project.resolve(name.group(1));
    Files.createDirectories(file.getParent());
    Files.writeString(file, block.text());
  }

  private static ProcessBuilder shell(
      List<String> command, Path project, Map<String, String> env, Path log) {
    ProcessBuilder pb =
        new ProcessBuilder(command)
            .directory(project.toFile())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile());
    pb.environment().putAll(env);
    return pb;
  }

  private static String run(Block block, Path project, Map<String, String> env, Path tmp)
      throws Exception {
    Path log = Files.createTempFile(tmp, "sh-", ".log");
    Process p =
        shell(List.of("bash", "-euo", "pipefail", "-c", block.text()), project, env, log).start();
    boolean exited = p.waitFor(MAVEN_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
    if (!exited) {
      p.destroyForcibly();
    }
    String out = Files.readString(log, StandardCharsets.UTF_8);
    assertTrue(exited && p.exitValue() == 0, block.text() + " failed:\n" + out);
    return out;
  }

  /**
   * Runs the worker's block in a process group of its own until the three jobs are done, then sends
   * the group a SIGINT (Ctrl-C) and waits for the worker to drain and exit.
   */
  private static String runUntilJobsAreDone(
      Block block, Path project, Map<String, String> env, Path tmp, RunlaterClient client)
      throws Exception {
    Path log = Files.createTempFile(tmp, "worker-", ".log");
    Process p = shell(List.of("setsid", "bash", "-c", block.text()), project, env, log).start();
    try {
      JobFilter emails = JobFilter.queue("emails");
      Await.until(
          MAVEN_TIMEOUT,
          "two jobs SUCCEEDED and one FAILED",
          () ->
              client.countJobs(emails.withState(JobState.SUCCEEDED)) == 2
                  && client.countJobs(emails.withState(JobState.FAILED)) == 1);
      signalGroup("-INT", p);
      assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the worker exits on Ctrl-C");
      // The JVM ends with 130 (128 + SIGINT) once its shutdown hooks are done.
      assertTrue(List.of(0, 130).contains(p.exitValue()), "exit status " + p.exitValue());
    } finally {
      if (p.isAlive()) {
        signalGroup("-KILL", p);
      }
    }
    return Files.readString(log, StandardCharsets.UTF_8);
  }

  private static void signalGroup(String signal, Process leader) throws Exception {
    new ProcessBuilder("kill", signal, "--", "-" + leader.pid()).inheritIO().start().waitFor();
  }
}
