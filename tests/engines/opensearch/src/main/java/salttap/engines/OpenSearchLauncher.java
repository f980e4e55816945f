package salttap.engines;

import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.opensearch.analysis.common.CommonAnalysisPlugin;
import org.opensearch.cluster.service.ClusterService;
import org.opensearch.common.settings.Settings;
import org.opensearch.env.Environment;
import org.opensearch.http.HttpServerTransport;
import org.opensearch.index.reindex.ReindexPlugin;
import org.opensearch.node.InternalSettingsPreparer;
import org.opensearch.node.Node;
import org.opensearch.plugins.Plugin;
import org.opensearch.transport.Netty4Plugin;

/**
 * Test-only launcher: one real OpenSearch 2.19 node with the netty4, reindex and
 * analysis-common modules. The command line, layout and settings: EngineLauncher.
 */
public final class OpenSearchLauncher {
    private OpenSearchLauncher() {}

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
        EngineLauncher.run("OpenSearchLauncher", "opensearch", args, OpenSearchLauncher::node);
    }

    private static EngineLauncher.EngineNode node(Map<String, String> settings) {
        Settings.Builder builder = Settings.builder();
        settings.forEach(builder::put);
        Environment env = InternalSettingsPreparer.prepareEnvironment(
            builder.build(), Collections.emptyMap(), null, () -> EngineLauncher.NODE_NAME);
        Node node = new EmbeddedNode(env, List.of(Netty4Plugin.class, ReindexPlugin.class, CommonAnalysisPlugin.class));
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
