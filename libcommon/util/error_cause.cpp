#include "util/error_cause.h"

#include <mutex>
#include <utility>

namespace bk {
namespace {
std::mutex g_cause_mutex;
std::string g_cause;
}  // namespace

void set_error_cause(std::string cause) {
  std::lock_guard lock(g_cause_mutex);
  if (g_cause.empty()) g_cause = std::move(cause);
}

std::string take_error_cause() {
  std::lock_guard lock(g_cause_mutex);
  return std::exchange(g_cause, std::string());
}

}  // namespace bk
