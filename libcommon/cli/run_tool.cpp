#include "cli/run_tool.h"

#include "io/cleanup.h"
#include "util/error_cause.h"
#include "util/printable.h"
#include "util/tool_name.h"

#include <boost/program_options/errors.hpp>

#include <cstdio>
#include <string>

namespace bk {

namespace {

// "TOOL: error: MESSAGE" as one line. A corrupt compressed input shows up first as bad data in whatever read it;
// the corruption is the error.
void report_error(const char* name, std::string_view message) {
  const std::string shown = one_line(message);
  if (std::string cause = take_error_cause(); !cause.empty())
    std::fprintf(stderr, "%s: error: %s (seen first as: %s)\n", name, one_line(cause).c_str(), shown.c_str());
  else
    std::fprintf(stderr, "%s: error: %s\n", name, shown.c_str());
}

}  // namespace

int run_tool(const char* name, int argc, char** argv, const std::function<int(int, char**)>& body) {
  set_tool_identity(name, argc, argv);
  install_signal_cleanup();
  try {
    return body(argc, argv);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "%s: %s; try --help\n", name, one_line(e.what()).c_str());
    return 2;
  } catch (const boost::program_options::error& e) {
    std::fprintf(stderr, "%s: %s; try --help\n", name, one_line(e.what()).c_str());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "%s: error: out of memory\n", name);
    return 1;
  } catch (const Error& e) {
    report_error(name, e.what());
    return 1;
  } catch (const std::exception& e) {
    report_error(name, library_message(e));
    return 1;
  }
}

}  // namespace bk
