package salttap.engines;

import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.elasticsearch.cluster.service.ClusterService;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.env.Environment;
import org.elasticsearch.http.HttpServerTransport;
import org.elasticsearch.node.InternalSettingsPreparer;
import org.elasticsearch.node.Node;
import org.elasticsearch.plugins.Plugin;
import org.elasticsearch.reindex.ReindexPlugin;
import org.elasticsearch.transport.Netty4Plugin;

/**
 * Test-only launcher: one real Elasticsearch 7.17 node with the netty4 and reindex modules
 * (analysis-common is not on Maven Central for 7.17). The command line, layout and
 * settings: EngineLauncher.
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
        // Build.CURRENT reads these; the real 7.17 tarball reports "default"/"tar" in GET /.
        if (System.getProperty("es.distribution.flavor") == null) {
            System.setProperty("es.distribution.flavor", "default");
        }
        if (System.getProperty("es.distribution.type") == null) {
            System.setProperty("es.distribution.type", "tar");
        }
        EngineLauncher.run("ElasticsearchLauncher", "elasticsearch", args, ElasticsearchLauncher::node);
    }

    private static EngineLauncher.EngineNode node(Map<String, String> settings) {
        Settings.Builder builder = Settings.builder();
        settings.forEach(builder::put);
        Environment env = InternalSettingsPreparer.prepareEnvironment(
            builder.build(), Collections.emptyMap(), null, () -> EngineLauncher.NODE_NAME);
        Node node = new EmbeddedNode(env, List.of(Netty4Plugin.class, ReindexPlugin.class));
        return new EngineLauncher.EngineNode() {
            @Override
            public int start() throws Exception {
                node.start();
                return node.injector().getInstance(HttpServerTransport.class).boundAddress().publishAddress().getPort();
            }

            @Override
            public void close() throws Exception {
                node.close();
                node.awaitClose(20, TimeUnit.SECONDS);
            }
        };
    }
}
