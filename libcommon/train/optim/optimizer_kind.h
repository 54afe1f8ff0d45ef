// Which optimizer a run steps with (--optimizer), by name (torch-free).
#pragma once

#include "util/choices.h"

namespace bk {

enum class OptimizerKind { lamb, adamw, stableadamw, acclip, madgrad };
inline constexpr Choice<OptimizerKind> kOptimizerKinds[] = {{"lamb", OptimizerKind::lamb},
                                                            {"adamw", OptimizerKind::adamw},
                                                            {"stableadamw", OptimizerKind::stableadamw},
                                                            {"acclip", OptimizerKind::acclip},
                                                            {"madgrad", OptimizerKind::madgrad}};

}  // namespace bk
