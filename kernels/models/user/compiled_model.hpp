// A user model ready to run: its validated definition, the program the kernels read and the
// bucket it runs in, behind the ModelInfo that runs, specs and the service pass around.
#pragma once

#include <memory>

#include "kernels/models/model_info.hpp"
#include "kernels/models/user/definition.hpp"
#include "kernels/models/user/user_model.hpp"

namespace ukes {

struct CompiledUserModel {
  UserModelDefinition definition;
  UserModelProgram program;  // views into definition.program: never copied apart from it
  int bucket = 0;            // UserModel<bucket> (kernels/models/user/buckets.hpp)

  CompiledUserModel(const CompiledUserModel&) = delete;
  CompiledUserModel& operator=(const CompiledUserModel&) = delete;
  explicit CompiledUserModel(UserModelDefinition def);
};

// The description of `definition` as a model: sizes, names, defaults, and the compiled program
// (ModelInfo::user). Throws DefinitionError when the model is larger than every bucket.
std::shared_ptr<const ModelInfo> make_user_model_info(UserModelDefinition definition);

// The program of a batch's model for the kernels: null for a built-in model.
inline const UserModelProgram* program_of(const ModelInfo& model) {
  return model.user ? &model.user->program : nullptr;
}

}  // namespace ukes
