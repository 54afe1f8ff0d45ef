// Which device a process computes on, and the CUDA runtime settings bertkit's numerics rely on: shared by training,
// evaluation and inference.
#pragma once

#include "launch/dist_env.h"

#include <ATen/ATen.h>

#include <string>

namespace bk {

// The device a --device flag names: "cpu", "cuda" (the GPU LOCAL_RANK picks, modulo the devices present) or
// "cuda:N". Only chooses: nothing about the process changes. bk::UsageError for any other name; bk::Error for a
// device that is absent (CUDA asked for where there is none, an index past the devices present).
at::Device choose_device(const std::string& name, const DistEnv& env);

// Makes a CUDA `device` the process's current one and sets, for the whole process, what bertkit's CUDA numerics
// rely on: cuDNN's attention off (its dropout rounds the probability) and torch's sync-debug mode from
// BERTKIT_CUDA_SYNC_DEBUG (warn or error). Does nothing for the CPU. Called once, before anything allocates.
void set_up_cuda_runtime(const at::Device& device);

// The NUMA node the system reports for a CUDA device (from its PCI address in /sys), or -1.
int cuda_device_numa_node(const at::Device& device);

}  // namespace bk
