package salttap.engines;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/**
 * What every test engine launcher shares, whatever the engine: the command line, the
 * directory layout, the node's settings, the port file and the shutdown. This one file is
 * compiled into each engine's launcher (build-helper-maven-plugin adds
 * tests/engines/launcher-common to each pom); the node comes from EmbeddedEngine, a template
 * each pom fills in with its engine's package, since each engine's classes live in its own
 * packages and jars, and each launcher (OpenSearchLauncher, OpenSearch3Launcher,
 * ElasticsearchLauncher) only names its engine's modules.
 *
 * Usage: LAUNCHER DIR [HTTP_PORT]
 *   DIR        data, logs and home live under it (DIR/home, DIR/data, DIR/logs)
 *   HTTP_PORT  0 (default) picks a free port
 * Once HTTP serves, the bound port is written to DIR/port (atomically).
 * DIR/node.properties, when present, overrides the node's settings (one key=value a line;
 * an empty value removes the key): how the harness makes a node of a several-node cluster
 * (node name, transport port, discovery). Without it the node is a one-node cluster.
 * SIGTERM/SIGINT closes the node cleanly.
 */
public final class EngineLauncher {
    private EngineLauncher() {}

    /** One engine node, built directly (no Bootstrap: no root check, no bootstrap checks, no security manager). */
    public interface EngineNode {
        /** Starts the node; returns the HTTP port it bound. */
        int start() throws Exception;

        /** Closes the node and waits for it to finish closing. */
        void close() throws Exception;
    }

    /** Builds an engine's node from the settings below (keys every engine of the three reads alike). */
    @FunctionalInterface
    public interface NodeFactory {
        EngineNode create(Map<String, String> settings) throws Exception;
    }

    /** The node's name, also what InternalSettingsPreparer is given as the default. */
    public static final String NODE_NAME = "node-1";

    /** Runs one node until SIGTERM/SIGINT; `launcher` names the class in the usage line, `engine` in the log. */
    public static void run(String launcher, String engine, String[] args, NodeFactory factory) throws Exception {
        if (args.length < 1 || args.length > 2) {
            System.err.println("usage: " + launcher + " DIR [HTTP_PORT]");
            System.exit(2);
        }
        Path dir = Paths.get(args[0]).toAbsolutePath();
        String httpPort = args.length > 1 ? args[1] : "0";
        Path home = dir.resolve("home");
        for (String sub : new String[] {"config", "modules", "plugins"}) {
            Files.createDirectories(home.resolve(sub));
        }
        Files.createDirectories(dir.resolve("data"));
        Files.createDirectories(dir.resolve("logs"));
        Files.deleteIfExists(dir.resolve("port"));

        EngineNode node = factory.create(withOverrides(settings(dir, home, httpPort), dir.resolve("node.properties")));
        CountDownLatch closed = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                node.close();
            } catch (Exception e) {
                e.printStackTrace();
            } finally {
                closed.countDown();
            }
        }, "engine-shutdown"));

        int port;
        try {
            port = node.start();
        } catch (Throwable t) {
            // e.g. the HTTP port is taken: exit instead of idling on non-daemon threads
            t.printStackTrace();
            System.exit(1);
            return;
        }
        Path tmp = dir.resolve("port.tmp");
        Files.write(tmp, (port + "\n").getBytes(StandardCharsets.US_ASCII));
        Files.move(tmp, dir.resolve("port"), StandardCopyOption.ATOMIC_MOVE);
        System.out.println("engine " + engine + " listening on http://127.0.0.1:" + port);
        System.out.flush();
        closed.await();
    }

    /** The settings with DIR/node.properties applied (an empty value removes a key); unchanged without the file. */
    static Map<String, String> withOverrides(Map<String, String> base, Path file) throws java.io.IOException {
        if (!Files.exists(file)) {
            return base;
        }
        java.util.Properties props = new java.util.Properties();
        try (java.io.Reader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            props.load(in);
        }
        Map<String, String> s = new LinkedHashMap<>(base);
        for (String key : props.stringPropertyNames()) {
            String value = props.getProperty(key).trim();
            if (value.isEmpty()) {
                s.remove(key);
            } else {
                s.put(key, value);
            }
        }
        return Collections.unmodifiableMap(s);
    }

    /** One node, its own cluster, bound to 127.0.0.1 only, disk watermarks off. */
    static Map<String, String> settings(Path dir, Path home, String httpPort) {
        Map<String, String> s = new LinkedHashMap<>();
        s.put("path.home", home.toString());
        s.put("path.data", dir.resolve("data").toString());
        s.put("path.logs", dir.resolve("logs").toString());
        s.put("cluster.name", "salttap-test");
        s.put("node.name", NODE_NAME);
        s.put("discovery.type", "single-node");
        s.put("network.host", "127.0.0.1");
        s.put("http.port", httpPort);
        s.put("transport.port", "0");
        s.put("http.type", "netty4");
        s.put("transport.type", "netty4");
        s.put("cluster.routing.allocation.disk.threshold_enabled", "false");
        s.put("action.auto_create_index", "true");
        return Collections.unmodifiableMap(s);
    }
}
