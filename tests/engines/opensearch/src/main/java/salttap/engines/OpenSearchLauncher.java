package salttap.engines;

import java.util.List;

import org.opensearch.analysis.common.CommonAnalysisPlugin;
import org.opensearch.index.reindex.ReindexPlugin;
import org.opensearch.transport.Netty4Plugin;

/**
 * Test-only launcher: one real OpenSearch 2.19 node with the netty4, reindex and
 * analysis-common modules. The command line, layout and settings: EngineLauncher; the node:
 * EmbeddedEngine.
 */
public final class OpenSearchLauncher {
    private OpenSearchLauncher() {}

    public static void main(String[] args) throws Exception {
        EngineLauncher.run("OpenSearchLauncher", "opensearch", args,
            EmbeddedEngine.withPlugins(List.of(Netty4Plugin.class, ReindexPlugin.class, CommonAnalysisPlugin.class)));
    }
}
