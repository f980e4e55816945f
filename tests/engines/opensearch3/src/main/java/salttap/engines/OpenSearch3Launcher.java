package salttap.engines;

import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

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
 * Test-only launcher: one real OpenSearch 3.x node, the 2.19 launcher's twin: 3.x renamed
 * the module plugins to *ModulePlugin and takes classpath plugins as PluginInfo. The
 * command line, layout and settings: EngineLauncher.
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
        EngineLauncher.run("OpenSearch3Launcher", "opensearch3", args, OpenSearch3Launcher::node);
    }

    private static EngineLauncher.EngineNode node(Map<String, String> settings) {
        Settings.Builder builder = Settings.builder();
        settings.forEach(builder::put);
        Environment env = InternalSettingsPreparer.prepareEnvironment(
            builder.build(), Collections.emptyMap(), null, () -> EngineLauncher.NODE_NAME);
        Node node = new EmbeddedNode(env,
            List.of(Netty4ModulePlugin.class, ReindexModulePlugin.class, CommonAnalysisModulePlugin.class));
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
