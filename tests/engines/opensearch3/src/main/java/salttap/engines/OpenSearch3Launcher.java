package salttap.engines;

import java.util.Collections;
import java.util.List;
import java.util.stream.Collectors;

import org.opensearch.Version;
import org.opensearch.analysis.common.CommonAnalysisModulePlugin;
import org.opensearch.index.reindex.ReindexModulePlugin;
import org.opensearch.plugins.Plugin;
import org.opensearch.plugins.PluginInfo;
import org.opensearch.transport.Netty4ModulePlugin;

/**
 * Test-only launcher: one real OpenSearch 3.x node, the 2.19 launcher's twin: 3.x renamed
 * the module plugins to *ModulePlugin and takes classpath plugins as PluginInfo. The
 * command line, layout and settings: EngineLauncher; the node: EmbeddedEngine.
 */
public final class OpenSearch3Launcher {
    private OpenSearch3Launcher() {}

    public static void main(String[] args) throws Exception {
        List<Class<? extends Plugin>> modules =
            List.of(Netty4ModulePlugin.class, ReindexModulePlugin.class, CommonAnalysisModulePlugin.class);
        EngineLauncher.run("OpenSearch3Launcher", "opensearch3", args,
            EmbeddedEngine.withPlugins(modules.stream().map(OpenSearch3Launcher::info).collect(Collectors.toList())));
    }

    private static PluginInfo info(Class<? extends Plugin> plugin) {
        return new PluginInfo(plugin.getName(), "classpath plugin", "NA", Version.CURRENT, "21",
            plugin.getName(), Collections.emptyList(), false);
    }
}
