package salttap.engines;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.elasticsearch.cluster.service.ClusterService;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.env.Environment;
import org.elasticsearch.http.HttpServerTransport;
import org.elasticsearch.reindex.ReindexPlugin;
import org.elasticsearch.node.InternalSettingsPreparer;
import org.elasticsearch.node.Node;
import org.elasticsearch.plugins.Plugin;
import org.elasticsearch.transport.Netty4Plugin;

/**
 * Test-only launcher: one real Elasticsearch 7.17 node, built directly (no Bootstrap, so no root
 * check, no bootstrap checks, no security manager), bound to 127.0.0.1 only.
 *
 * Usage: ElasticsearchLauncher DIR [HTTP_PORT]
 *   DIR        data, logs and home live under it (DIR/home, DIR/data, DIR/logs)
 *   HTTP_PORT  0 (default) picks a free port
 * Once HTTP serves, the bound port is written to DIR/port (atomically).
 * SIGTERM/SIGINT closes the node cleanly.
 */
public final class ElasticsearchLauncher {
    private ElasticsearchLauncher() {}

    static final class EmbeddedNode extends Node {
        EmbeddedNode(Environment env, Collection<Class<? extends Plugin>> plugins) {
            super(env, plugins, true);
        }

        @Override
        protected void configureNodeAndClusterIdStateListener(ClusterService clusterService) {
            // The stock listener feeds log4j's node-id converter; not needed here.
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 1 || args.length > 2) {
            System.err.println("usage: ElasticsearchLauncher DIR [HTTP_PORT]");
            System.exit(2);
        }
        // Build.CURRENT reads these; the real 7.17 tarball reports "default"/"tar" in GET /.
        if (System.getProperty("es.distribution.flavor") == null) {
            System.setProperty("es.distribution.flavor", "default");
        }
        if (System.getProperty("es.distribution.type") == null) {
            System.setProperty("es.distribution.type", "tar");
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

        Settings settings = Settings.builder()
            .put("path.home", home.toString())
            .put("path.data", dir.resolve("data").toString())
            .put("path.logs", dir.resolve("logs").toString())
            .put("cluster.name", "salttap-test")
            .put("node.name", "node-1")
            .put("discovery.type", "single-node")
            .put("network.host", "127.0.0.1")
            .put("http.port", httpPort)
            .put("transport.port", "0")
            .put("http.type", "netty4")
            .put("transport.type", "netty4")
            .put("cluster.routing.allocation.disk.threshold_enabled", false)
            .put("action.auto_create_index", true)
            .build();
        Environment env = InternalSettingsPreparer.prepareEnvironment(
            settings, Collections.emptyMap(), null, () -> "node-1");
        List<Class<? extends Plugin>> plugins =
            List.of(Netty4Plugin.class, ReindexPlugin.class);
        Node node = new EmbeddedNode(env, plugins);

        CountDownLatch closed = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                node.close();
                node.awaitClose(20, TimeUnit.SECONDS);
            } catch (IOException | InterruptedException e) {
                e.printStackTrace();
            } finally {
                closed.countDown();
            }
        }, "engine-shutdown"));

        int port;
        try {
            node.start();
            port = node.injector().getInstance(HttpServerTransport.class)
                .boundAddress().publishAddress().getPort();
        } catch (Throwable t) {
            // e.g. the HTTP port is taken: exit instead of idling on non-daemon threads
            t.printStackTrace();
            System.exit(1);
            return;
        }
        Path tmp = dir.resolve("port.tmp");
        Files.write(tmp, (port + "\n").getBytes(StandardCharsets.US_ASCII));
        Files.move(tmp, dir.resolve("port"), StandardCopyOption.ATOMIC_MOVE);
        System.out.println("engine elasticsearch listening on http://127.0.0.1:" + port);
        System.out.flush();
        closed.await();
    }
}
