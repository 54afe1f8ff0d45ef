// The random-generator states of a training process, which checkpoints carry so that a resumed run draws what the
// straight run would have drawn.
#pragma once

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

namespace bk {

// The states of this process's generators (CPU, and the CUDA device in use) as JSON, and back.
nlohmann::json generator_states(const at::Device& device);
void restore_generator_states(const nlohmann::json& states, const at::Device& device);

}  // namespace bk
