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
import java.util.stream.Collectors;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.opensearch.Version;
import org.opensearch.analysis.common.CommonAnalysisModulePlugin;
import org.opensearch.cluster.service.ClusterService;
import org.opensearch.common.settings.Settings;
import org.opensearch.env.Environment;
import org.opensearch.http.HttpServerTransport;
import org.opensearch.index.reindex.ReindexModulePlugin;
import org.opensearch.node.InternalSettingsPreparer;
import org.opensearch.node.Node;
import org.opensearch.plugins.Plugin;
import org.opensearch.plugins.PluginInfo;
import org.opensearch.transport.Netty4ModulePlugin;

/**
 * Test-only launcher: one real OpenSearch 3.x node (the 2.19 launcher's twin: 3.x renamed the
 * module plugins to *ModulePlugin and takes classpath plugins as PluginInfo), built directly (no Bootstrap, so no root
 * check, no bootstrap checks, no security manager), bound to 127.0.0.1 only.
 *
 * Usage: OpenSearch3Launcher DIR [HTTP_PORT]
 *   DIR        data, logs and home live under it (DIR/home, DIR/data, DIR/logs)
 *   HTTP_PORT  0 (default) picks a free port
 * Once HTTP serves, the bound port is written to DIR/port (atomically).
 * SIGTERM/SIGINT closes the node cleanly.
 */
public final class OpenSearch3Launcher {
    private OpenSearch3Launcher() {}

    static final class EmbeddedNode extends Node {
        EmbeddedNode(Environment env, Collection<Class<? extends Plugin>> plugins) {
            super(env, plugins.stream().map(EmbeddedNode::info).collect(Collectors.toList()), true);
        }

        private static PluginInfo info(Class<? extends Plugin> plugin) {
            return new PluginInfo(plugin.getName(), "classpath plugin", "NA", Version.CURRENT, "21",
                plugin.getName(), Collections.emptyList(), false);
        }

        @Override
        protected void configureNodeAndClusterIdStateListener(ClusterService clusterService) {
            // The stock listener feeds log4j's node-id converter; not needed here.
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 1 || args.length > 2) {
            System.err.println("usage: OpenSearch3Launcher DIR [HTTP_PORT]");
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
            List.of(Netty4ModulePlugin.class, ReindexModulePlugin.class, CommonAnalysisModulePlugin.class);
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
        System.out.println("engine opensearch3 listening on http://127.0.0.1:" + port);
        System.out.flush();
        closed.await();
    }
}
