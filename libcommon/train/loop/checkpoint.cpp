#include "train/loop/checkpoint.h"

#include "train/loop/output_dir.h"
#include "ckpt/checkpoint_path.h"

#include "io/cleanup.h"
#include "util/error.h"
#include "util/json_read.h"
#include "io/input.h"
#include "io/durable.h"
#include "io/output.h"
#include "model/safetensors_torch.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>
#include <sys/stat.h>

namespace bk {

namespace fs = std::filesystem;

namespace {

constexpr const char* kBase64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// The umask, read without changing it (umask(2) sets it too, a race with threads that create files meanwhile).
mode_t process_umask() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("Umask:", 0) == 0) return static_cast<mode_t>(std::stoul(line.substr(6), nullptr, 8));
  return 022;
}

std::string step_name(int64_t step) { return fmt::format("step-{:08d}", step); }

}  // namespace

void write_checkpoint_dir(const std::string& dir, const Checkpoint& ckpt) {
  const fs::path final_dir(dir);
  const fs::path parent = final_dir.parent_path().empty() ? fs::path(".") : final_dir.parent_path();
  std::error_code ec;
  std::string temp = (parent / (final_dir.filename().string() + ".tmp.XXXXXX")).string();
  if (!::mkdtemp(temp.data()))
    fail("{}: cannot create a temporary directory: {}", parent.string(), std::strerror(errno));
  // mkdtemp makes it 0700; a checkpoint is as readable as every other output (0755, less the umask).
  ::chmod(temp.c_str(), 0755 & ~process_umask());
  // An interrupt (SIGINT, SIGTERM, SIGHUP) while the files are written removes them and the directory: the
  // directory is registered first, so the handler reaches it after its files.
  std::vector<int> slots = {register_cleanup_dir(temp)};
  for (const char* name : {"model.safetensors", "optimizer.safetensors", "config.json", "trainer_state.json", "task.json"})
    slots.push_back(register_cleanup((fs::path(temp) / name).string()));
  for (const auto& [name, contents] : ckpt.tokenizer) slots.push_back(register_cleanup((fs::path(temp) / name).string()));
  auto release = [&] {
    for (int slot : slots) unregister_cleanup(slot);
  };
  try {
    save_safetensors((fs::path(temp) / "model.safetensors").string(), ckpt.model);
    if (!ckpt.optimizer.empty()) save_safetensors((fs::path(temp) / "optimizer.safetensors").string(), ckpt.optimizer);
    write_file_atomic((fs::path(temp) / "config.json").string(), ckpt.config.to_json().dump(2) + "\n");
    write_file_atomic((fs::path(temp) / "trainer_state.json").string(), ckpt.state.dump(2) + "\n");
    if (!ckpt.task.empty()) write_file_atomic((fs::path(temp) / "task.json").string(), ckpt.task.dump(2) + "\n");
    for (const auto& [name, contents] : ckpt.tokenizer) write_file_atomic((fs::path(temp) / name).string(), contents);
    // Every file above was synced by its own commit; the directory's entries and then its new name are synced
    // around the rename, so a power cut cannot leave a step directory that looks complete and is not.
    sync_directory_contents(temp, final_dir.string());
    if (fs::exists(final_dir)) fs::remove_all(final_dir);  // the same step saved again (a resumed run)
    fs::rename(temp, final_dir);
    sync_directory(parent.string(), final_dir.string());
    release();
  } catch (...) {
    fs::remove_all(temp, ec);
    release();
    throw;
  }
}

std::string save_checkpoint(const std::string& output_dir, int64_t step, const Checkpoint& ckpt, int keep) {
  const fs::path root = fs::path(output_dir) / "checkpoints";
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec) fail("{}: cannot create the checkpoint directory: {}", root.string(), ec.message());
  // Leftovers of a run killed while saving are removed first: they were never complete.
  for (const std::string& temporary : checkpoint_step_temporaries(output_dir)) fs::remove_all(temporary, ec);

  const fs::path final_dir = root / step_name(step);
  write_checkpoint_dir(final_dir.string(), ckpt);
  write_file_atomic((root / "latest").string(), step_name(step) + "\n");
  const std::vector<std::string> dirs = checkpoint_step_dirs(output_dir);
  for (size_t i = 0; keep > 0 && i + static_cast<size_t>(keep) < dirs.size(); ++i) fs::remove_all(dirs[i], ec);
  return final_dir.string();
}

Checkpoint read_checkpoint_dir(const std::string& dir, bool with_optimizer) {
  Checkpoint c;
  c.path = dir;
  const fs::path d(dir);
  if (!fs::is_directory(d)) fail("{}: not a checkpoint directory", dir);
  for (const char* required : {"model.safetensors", "config.json"})
    if (!fs::exists(d / required)) fail("{}: no {} (not a bertkit checkpoint?)", dir, required);
  c.config = BertConfig::load((d / "config.json").string());
  c.model = load_safetensors((d / "model.safetensors").string());
  if (with_optimizer && fs::exists(d / "optimizer.safetensors"))
    c.optimizer = load_safetensors((d / "optimizer.safetensors").string());
  if (fs::exists(d / "trainer_state.json")) {
    const std::string path = (d / "trainer_state.json").string();
    c.state = parse_json(read_file(path), path);
  }
  c.task = read_checkpoint_task(dir);
  return c;
}


std::string tensor_to_base64(const at::Tensor& bytes) {
  at::Tensor t = bytes.contiguous().to(at::kCPU);
  const auto* p = static_cast<const unsigned char*>(t.data_ptr());
  const size_t n = static_cast<size_t>(t.nbytes());
  std::string out;
  out.reserve((n + 2) / 3 * 4);
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = uint32_t(p[i]) << 16 | (i + 1 < n ? uint32_t(p[i + 1]) << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
    out.push_back(kBase64[v >> 18 & 63]);
    out.push_back(kBase64[v >> 12 & 63]);
    out.push_back(i + 1 < n ? kBase64[v >> 6 & 63] : '=');
    out.push_back(i + 2 < n ? kBase64[v & 63] : '=');
  }
  return out;
}

at::Tensor tensor_from_base64(const std::string& text) {
  std::vector<uint8_t> bytes;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    if (c == '=') break;
    const char* pos = std::strchr(kBase64, c);
    if (!pos || c == '\0') fail("invalid base64 in a checkpoint's trainer_state.json");
    acc = acc << 6 | static_cast<uint32_t>(pos - kBase64);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bytes.push_back(static_cast<uint8_t>(acc >> bits & 0xFF));
    }
  }
  at::Tensor t = at::empty({static_cast<int64_t>(bytes.size())}, at::kByte);
  if (!bytes.empty()) std::memcpy(t.data_ptr(), bytes.data(), bytes.size());
  return t;
}

}  // namespace bk
