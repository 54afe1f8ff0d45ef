// Test-only: runs bk::make_optimizer over parameters and gradients given in files, so tests/compat/test_lamb.py
// can compare the steps with independent implementations.
//
//   optim_probe SPEC.json OUT.f32
// SPEC.json: {"kind": "lamb"|"adamw", optional OptimizerConfig fields ("beta1", "beta2", "eps", "weight_decay",
//   "max_grad_norm", "grad_averaging", "trust_ratio_all", "fused"), "params": [{"name": N, "shape": [..]}, ..],
//   "lrs": [lr per step], "data": path of raw little-endian float32: the initial parameters, concatenated in
//   order, then for each step all the gradients, concatenated in the same order;
//   optional "resume_at": k: after k steps, export the state, build a fresh optimizer and load it (a resume)}.
// OUT.f32 receives, as float32: the parameters after each step (all concatenated), then the final exp_avg and
// exp_avg_sq of every parameter. stdout: {"norms": [global gradient norm per step], "steps": n}.
#include "cli/run_tool.h"
#include "train/optim/make_optimizer.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>

namespace {

std::vector<float> read_floats(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) bk::fail("{}: cannot open", path);
  in.seekg(0, std::ios::end);
  const auto bytes = static_cast<size_t>(in.tellg());
  if (bytes % sizeof(float) != 0) bk::fail("{}: {} bytes is not a whole number of float32 values", path, bytes);
  std::vector<float> values(bytes / sizeof(float));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(values.data()), static_cast<std::streamsize>(bytes));
  return values;
}

void write_tensor(std::ofstream& out, const at::Tensor& t) {
  at::Tensor c = t.detach().to(at::kFloat).cpu().contiguous();
  out.write(reinterpret_cast<const char*>(c.data_ptr<float>()), static_cast<std::streamsize>(c.numel() * sizeof(float)));
}

int probe(int argc, char** argv) {
  if (argc != 3) bk::usage_fail("usage: optim_probe SPEC.json OUT.f32");
  std::ifstream spec_file(argv[1]);
  if (!spec_file) bk::fail("{}: cannot open", argv[1]);
  const nlohmann::json spec = nlohmann::json::parse(spec_file);

  bk::OptimizerConfig config;
  config.kind = *bk::find_choice(bk::kOptimizerKinds, spec.at("kind").get<std::string>());
  config.beta1 = spec.value("beta1", config.beta1);
  config.beta2 = spec.value("beta2", config.beta2);
  config.eps = spec.value("eps", config.eps);
  config.weight_decay = spec.value("weight_decay", config.weight_decay);
  config.max_grad_norm = spec.value("max_grad_norm", config.max_grad_norm);
  config.grad_averaging = spec.value("grad_averaging", config.grad_averaging);
  config.trust_ratio_all = spec.value("trust_ratio_all", config.trust_ratio_all);
  config.fused = spec.value("fused", config.fused);
  const auto lrs = spec.at("lrs").get<std::vector<double>>();
  const int64_t resume_at = spec.value("resume_at", int64_t{-1});

  std::vector<std::string> names;
  std::vector<std::vector<int64_t>> shapes;
  int64_t total = 0;
  for (const auto& p : spec.at("params")) {
    names.push_back(p.at("name").get<std::string>());
    shapes.push_back(p.at("shape").get<std::vector<int64_t>>());
    total += c10::multiply_integers(shapes.back());
  }
  const std::vector<float> data = read_floats(spec.at("data").get<std::string>());
  if (static_cast<int64_t>(data.size()) != total * static_cast<int64_t>(1 + lrs.size()))
    bk::fail("{}: holds {} values, expected {} parameters x (1 + {} steps)", spec.at("data").get<std::string>(),
             data.size(), total, lrs.size());
  // Tensor i of block b (block 0: the parameters, block s + 1: the gradients of step s).
  auto slice = [&](size_t block, size_t i) {
    int64_t offset = static_cast<int64_t>(block) * total;
    for (size_t j = 0; j < i; ++j) offset += c10::multiply_integers(shapes[j]);
    return at::from_blob(const_cast<float*>(data.data()) + offset, shapes[i], at::kFloat).clone();
  };

  std::vector<at::Tensor> params;
  bk::NamedTensors named;
  for (size_t i = 0; i < names.size(); ++i) {
    params.push_back(slice(0, i).set_requires_grad(true));
    named.emplace_back(names[i], params.back());
  }
  auto optimizer = bk::make_optimizer(named, config);

  std::ofstream out(argv[2], std::ios::binary);
  if (!out) bk::fail("{}: cannot create", argv[2]);
  nlohmann::json norms = nlohmann::json::array();
  for (size_t s = 0; s < lrs.size(); ++s) {
    if (static_cast<int64_t>(s) == resume_at) {
      std::map<std::string, at::Tensor> saved;
      for (const auto& [name, t] : optimizer->state()) saved[name] = t.clone();
      optimizer = bk::make_optimizer(named, config);
      optimizer->load_state(saved);
    }
    for (size_t i = 0; i < params.size(); ++i) params[i].mutable_grad() = slice(s + 1, i);
    norms.push_back(optimizer->step(lrs[s]));
    for (const auto& p : params) write_tensor(out, p);
  }
  auto state = optimizer->state();
  for (const auto& name : names) write_tensor(out, state.at(name + ".exp_avg"));
  for (const auto& name : names) write_tensor(out, state.at(name + ".exp_avg_sq"));
  out.close();
  if (!out) bk::fail("{}: write failed", argv[2]);
  std::cout << nlohmann::json{{"norms", norms}, {"steps", optimizer->steps()}}.dump() << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return bk::run_tool("optim_probe", argc, argv, probe); }
