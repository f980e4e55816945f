package salttap.engines;

import java.util.Collection;
import java.util.Collections;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import ${engine.package}.cluster.service.ClusterService;
import ${engine.package}.common.settings.Settings;
import ${engine.package}.env.Environment;
import ${engine.package}.http.HttpServerTransport;
import ${engine.package}.node.InternalSettingsPreparer;
import ${engine.package}.node.Node;

/**
 * The node every test engine runs: built directly from EngineLauncher's settings with the
 * classpath plugins (the engine's modules) a launcher names, started, its HTTP port read,
 * closed. The three engines name these classes alike, each in its own packages, so this one
 * source is a template: each pom fills in its engine's package (engine.package) and what its
 * Node takes for a classpath plugin (engine.classpathPlugin: the plugin's class, or from
 * OpenSearch 3 on its PluginInfo) and compiles it into the launcher.
 */
final class EmbeddedEngine {
    private EmbeddedEngine() {}

    /** What EngineLauncher.run builds its node with: this engine's node with these classpath plugins. */
    static EngineLauncher.NodeFactory withPlugins(Collection<${engine.classpathPlugin}> plugins) {
        return settings -> node(settings, plugins);
    }

    private static final class EmbeddedNode extends Node {
        EmbeddedNode(Environment env, Collection<${engine.classpathPlugin}> plugins) {
            super(env, plugins, true);
        }

        @Override
        protected void configureNodeAndClusterIdStateListener(ClusterService clusterService) {
            // The stock listener feeds log4j's node-id converter; not needed here.
        }
    }

    private static EngineLauncher.EngineNode node(Map<String, String> settings,
                                                  Collection<${engine.classpathPlugin}> plugins) {
        Settings.Builder builder = Settings.builder();
        settings.forEach(builder::put);
        Environment env = InternalSettingsPreparer.prepareEnvironment(
            builder.build(), Collections.emptyMap(), null, () -> EngineLauncher.NODE_NAME);
        Node node = new EmbeddedNode(env, plugins);
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
