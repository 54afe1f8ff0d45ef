#include "tasks/attention_option.h"

#include "cli/options.h"
#include "util/error.h"

namespace bk {

void add_attention_option(Options& options, bool& unpadded, const char* help) {
  options.add()
    ("attention", po::value<std::string>()->default_value(unpadded ? "unpadded" : "padded")->value_name("KIND")
                      ->notifier([&unpadded](const std::string& kind) {
                        if (kind != "unpadded" && kind != "padded")
                          usage_fail("--attention must be unpadded or padded, got '{}'", kind);
                        unpadded = kind == "unpadded";
                      }),
     help);
}

}  // namespace bk
