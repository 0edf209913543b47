#include "kernels/models/model_info.hpp"

#include "kernels/models/catalogue.hpp"

namespace ukes {

const std::vector<ModelInfo>& catalogue_info() {
  static const std::vector<ModelInfo> infos = [] {
    std::vector<ModelInfo> v;
    for_each_model([&]<class M>() { v.push_back(model_info<M>()); });
    return v;
  }();
  return infos;
}

const ModelInfo* find_model(const std::string& name) {
  for (const auto& m : catalogue_info())
    if (m.name == name) return &m;
  return nullptr;
}

}  // namespace ukes
