#include "service/job_output.h"

#include <fmt/format.h>

namespace salttap::service {
namespace {

using correlator::Job;

void names(std::string& out, const Job& job, const correlator::MinionRegistry& reg, std::uint8_t mask,
           std::uint8_t value, std::size_t count, std::size_t cap) {
  if (count == 0) {
    out += "-";
    return;
  }
  std::size_t n = 0;
  for (std::size_t i = 0; i < job.minions.size() && n < cap; ++i) {
    if ((job.flags[i] & mask) != value) continue;
    if (n++) out += ',';
    out += reg.name(job.minions[i]);
  }
  if (count > n) out += fmt::format(" (+{} more)", count - n);
}

}  // namespace

void append_job_line(std::string& out, const Job& job, const correlator::MinionRegistry& reg, std::size_t cap) {
  out += fmt::format("{} {} {:<9} {} by {} on {} [{}]", format_utc(job.settled ? job.settled_at : job.started_at),
                     job.jid, correlator::to_string(job.status()), job.fun.empty() ? "?" : job.fun,
                     job.user.empty() ? "?" : job.user, job.tgt.empty() ? "-" : job.tgt, correlator::to_string(job.kind));
  if (job.kind == correlator::JobKind::runner || job.kind == correlator::JobKind::wheel) {
    if (!job.outcome_reason.empty()) out += " " + job.outcome_reason;
  } else {
    out += fmt::format(" | {}/{} ok: ", job.succeeded, job.expected);
    names(out, job, reg, correlator::kOutcomeMask, correlator::kSucceeded, job.succeeded, cap);
    out += " | failed: ";
    names(out, job, reg, correlator::kOutcomeMask, correlator::kFailed, job.failed, cap);
    out += " | missing: ";
    names(out, job, reg, correlator::kOutcomeMask, correlator::kMissing, job.missing, cap);
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

}  // namespace salttap::service
