#include "cli/internal/job_output.h"

#include <fmt/format.h>

namespace salttap::cli {
namespace {

using correlator::Job;

void names(std::string& out, const Job& job, const correlator::MinionRegistry& reg, std::uint8_t mask,
           std::uint8_t value, std::size_t cap) {
  std::size_t shown = 0;
  const std::size_t n = job.for_each_minion([&](std::uint8_t f) { return (f & mask) == value; },
                                            [&](correlator::MinionId m) {
                                              if (shown++) out += ',';
                                              out += reg.name(m);
                                            },
                                            cap);
  if (n == 0)
    out += "-";
  else if (n > shown)
    out += fmt::format(" (+{} more)", n - shown);
}

}  // namespace

void append_job_line(std::string& out, const Job& job, const correlator::MinionRegistry& reg, std::size_t cap) {
  out +=
      fmt::format("{} {} {:<9} {} by {} on {} [{}]", format_utc(job.settled ? job.settled_at : job.started_at), job.jid,
                  correlator::to_string(job.status()), job.fun.empty() ? "?" : job.fun,
                  job.user.empty() ? "?" : job.user, job.tgt.empty() ? "-" : job.tgt, correlator::to_string(job.kind));
  if (job.kind == correlator::JobKind::runner || job.kind == correlator::JobKind::wheel) {
    if (!job.outcome_reason.empty()) out += " " + job.outcome_reason;
  } else {
    out += fmt::format(" | {}/{} ok: ", job.succeeded, job.expected);
    names(out, job, reg, correlator::kOutcomeMask, correlator::kSucceeded, cap);
    out += " | failed: ";
    names(out, job, reg, correlator::kOutcomeMask, correlator::kFailed, cap);
    out += " | missing: ";
    names(out, job, reg, correlator::kOutcomeMask, correlator::kMissing, cap);
    if (job.late) out += fmt::format(" | late: {}", job.late);
  }
  if (job.state_run)
    out += fmt::format(" | states {} ok {} failed {} changed {} would-change of {}", job.states.succeeded,
                       job.states.failed, job.states.changed, job.states.would_change, job.states.total);
  if (job.risk.level != correlator::RiskLevel::none)
    out += fmt::format(" | risk {}", correlator::to_string(job.risk.level));
  if (job.updates) out += fmt::format(" (update {})", job.updates);
  out += '\n';
}

}  // namespace salttap::cli
