// The buckets user models run in: the one list of UserModel capacities every backend instantiates
// (CMakeLists.txt reads it from here), and the choice of a model's bucket.
#pragma once

#include "kernels/models/catalogue.hpp"
#include "kernels/models/user/user_model.hpp"

// Capacities in coordinates and constraint rows (CMakeLists.txt reads this line). Each costs one
// kernel instantiation per precision and backend (about a minute of nvcc each): the small ones keep
// common models close to their built-in cost, the last one is the size limit.
// clang-format off
#define UKES_USER_BUCKETS(X) X(4) X(8) X(12) X(16) X(32)
// clang-format on

namespace ukes {

// The largest bucket the CUDA module instantiates (CMakeLists.txt reads this line). Bucket 32's
// fused kernel alone took ptxas over 15 minutes and would keep a 32 x 32 system's matrices in
// local memory; larger user models run on the CPU (device auto), and device gpu is refused.
inline constexpr int kMaxGpuUserBucket = 16;

#define UKES_USER_BUCKET_TYPE(K) , UserModel<K>
using UserBuckets = DropFirst<void UKES_USER_BUCKETS(UKES_USER_BUCKET_TYPE)>;
#undef UKES_USER_BUCKET_TYPE

// The largest coordinates and rows a user model may have.
inline constexpr int kUserModelCapacity = [] {
  int largest = 0;
#define UKES_USER_BUCKET_MAX(K) largest = K > largest ? K : largest;
  UKES_USER_BUCKETS(UKES_USER_BUCKET_MAX)
#undef UKES_USER_BUCKET_MAX
  return largest;
}();

// The smallest bucket that holds n coordinates and `rows` constraint rows; 0 when none does.
inline constexpr int user_bucket_for(int n, int rows) {
  const int need = n > rows ? n : rows;
  int chosen = 0;
#define UKES_USER_BUCKET_FIT(K) \
  if (chosen == 0 && need <= K) chosen = K;
  UKES_USER_BUCKETS(UKES_USER_BUCKET_FIT)
#undef UKES_USER_BUCKET_FIT
  return chosen;
}

// Calls f.template operator()<UserModel<capacity>>(); false when no bucket has that capacity.
template <class F>
bool dispatch_user_bucket(int capacity, F&& f) {
  bool found = false;
  for_each_model(UserBuckets{}, [&]<class M>() {
    if (!found && M::kN == capacity) {
      found = true;
      f.template operator()<M>();
    }
  });
  return found;
}

// The one choice between a user model's bucket (user_bucket > 0) and a built-in model's type (by
// name): calls f.template operator()<Model>() for it; false when there is none.
template <class F>
bool dispatch_model_type(int user_bucket, std::string_view name, F&& f) {
  return user_bucket > 0 ? dispatch_user_bucket(user_bucket, f) : dispatch_model(name, f);
}

}  // namespace ukes
