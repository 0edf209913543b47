// Catalogue models as protocol messages.
#pragma once

#include "kernels/models/model_info.hpp"
#include "ukes/v1/ukes.pb.h"

namespace ukes {

void model_to_proto(const ModelInfo& m, v1::Model* out);

}  // namespace ukes
