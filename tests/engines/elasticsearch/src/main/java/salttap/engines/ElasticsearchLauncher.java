package salttap.engines;

import java.util.List;

import org.elasticsearch.reindex.ReindexPlugin;
import org.elasticsearch.transport.Netty4Plugin;

/**
 * Test-only launcher: one real Elasticsearch 7.17 node with the netty4 and reindex modules
 * (analysis-common is not on Maven Central for 7.17). The command line, layout and
 * settings: EngineLauncher; the node: EmbeddedEngine.
 */
public final class ElasticsearchLauncher {
    private ElasticsearchLauncher() {}

    public static void main(String[] args) throws Exception {
        // Build.CURRENT reads these; the real 7.17 tarball reports "default"/"tar" in GET /.
        if (System.getProperty("es.distribution.flavor") == null) {
            System.setProperty("es.distribution.flavor", "default");
        }
        if (System.getProperty("es.distribution.type") == null) {
            System.setProperty("es.distribution.type", "tar");
        }
        EngineLauncher.run("ElasticsearchLauncher", "elasticsearch", args,
            EmbeddedEngine.withPlugins(List.of(Netty4Plugin.class, ReindexPlugin.class)));
    }
}
