#include "train/loop/generator_state.h"

#include "train/loop/checkpoint.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/cuda/CUDAGeneratorImpl.h>

#include <mutex>

namespace bk {

nlohmann::json generator_states(const at::Device& device) {
  nlohmann::json states;
  auto cpu = at::detail::getDefaultCPUGenerator();
  {
    std::lock_guard<std::mutex> lock(cpu.mutex());
    states["cpu"] = tensor_to_base64(cpu.get_state());
  }
  if (device.is_cuda()) {
    auto cuda = at::cuda::detail::getDefaultCUDAGenerator(device.index() < 0 ? 0 : device.index());
    std::lock_guard<std::mutex> lock(cuda.mutex());
    states["cuda"] = tensor_to_base64(cuda.get_state());
  }
  return states;
}

void restore_generator_states(const nlohmann::json& states, const at::Device& device) {
  if (states.contains("cpu")) {
    auto cpu = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(cpu.mutex());
    cpu.set_state(tensor_from_base64(states["cpu"].get<std::string>()));
  }
  if (device.is_cuda() && states.contains("cuda")) {
    auto cuda = at::cuda::detail::getDefaultCUDAGenerator(device.index() < 0 ? 0 : device.index());
    std::lock_guard<std::mutex> lock(cuda.mutex());
    cuda.set_state(tensor_from_base64(states["cuda"].get<std::string>()));
  }
}

}  // namespace bk
