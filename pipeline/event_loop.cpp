#include "pipeline/event_loop.h"

namespace salttap::pipeline {
namespace {

class Loop {
 public:
  Loop(DocumentPipeline& pipeline, DocumentSink& sink) : pipeline_(pipeline), sink_(sink) {}

  // Hands the documents built so far to the sink; with `watch_sink`, an
  // alert the sink raises is dispatched (its document goes with the next flush).
  void flush(const std::function<bool()>& give_up, bool watch_sink) {
    if (!flat_known_) {
      if (const auto flat = sink_.return_flat()) {
        pipeline_.documents().set_return_flat(*flat);
        flat_known_ = true;
      }
    }
    const auto docs = pipeline_.take_docs();
    if (!docs.empty()) sink_.put(docs, give_up);
    if (!watch_sink) return;
    if (auto alert = sink_.poll_alert(pipeline_.master_id(), pipeline_.clock().now()))
      pipeline_.alerts().dispatch(*alert);
  }

 private:
  DocumentPipeline& pipeline_;
  DocumentSink& sink_;
  bool flat_known_ = false;
};

}  // namespace

int run_event_loop(EventFeed& feed, DocumentPipeline& pipeline, DocumentSink& sink, const EventLoopOptions& options) {
  Loop loop(pipeline, sink);
  const int rc = feed.pump(
      [&](const tap::Event& event) {
        pipeline.advance();
        pipeline.on_event(event);
        if (pipeline.documents().pending_docs() >= options.batch_docs) loop.flush(options.give_up, true);
      },
      [&] {
        pipeline.advance();
        loop.flush(options.give_up, true);
        if (options.after_batch) options.after_batch();
      });
  if (options.settle_at_end) pipeline.settle_all();
  loop.flush(options.give_up_at_end, false);
  return rc;
}

}  // namespace salttap::pipeline
