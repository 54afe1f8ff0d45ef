// Which optimizer a run steps with (--optimizer), by name (torch-free).
#pragma once

#include "util/choices.h"

namespace bk {

enum class OptimizerKind { lamb, adamw, acclip, madgrad };
inline constexpr Choice<OptimizerKind> kOptimizerKinds[] = {{"lamb", OptimizerKind::lamb},
                                                            {"adamw", OptimizerKind::adamw},
                                                            {"acclip", OptimizerKind::acclip},
                                                            {"madgrad", OptimizerKind::madgrad}};

}  // namespace bk
