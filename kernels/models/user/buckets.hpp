// The buckets user models run in: the one list of UserModel capacities every backend instantiates
// (CMakeLists.txt reads it from here), and the choice of a model's bucket.
#pragma once

#include <algorithm>
#include <cstddef>
#include <iterator>

#include "kernels/models/catalogue.hpp"
#include "kernels/models/user/user_model.hpp"

// Capacities in coordinates and constraint rows (CMakeLists.txt reads this line). Each costs one
// kernel instantiation per precision and backend (about a minute of nvcc each): the small ones keep
// common models close to their built-in cost, the last one is the size limit.
// clang-format off
#define UKES_USER_BUCKETS(X) X(4) X(8) X(12) X(16) X(32)
// clang-format on

// The buckets whose interpreted kernels the GPU module holds, a subset of UKES_USER_BUCKETS
// (CMakeLists.txt reads this line; the host emulation of the module holds the same). On a GPU a
// user model normally runs a kernel compiled for it alone (NVRTC, kernels/backend/cuda/jit/); the
// interpreter runs only where NVRTC cannot (no CUDA headers at run time, UKES_GPU_JIT=0), in the
// smallest of these buckets that holds the model (gpu_user_bucket_for). Each interpreted bucket
// is the CUDA module's costliest translation unit, and together they were two thirds of a cold
// build's nvcc time on the CI machine (2 cores: buckets 4, 8, 12 and 16 took 478, 832, 1252 and
// 1527 s), so the fallback keeps the smallest bucket, where most models fit, and the largest.
// Bucket 32's fused kernel alone took ptxas over 15 minutes and would keep a 32 x 32 system's
// matrices in local memory: larger user models run on the CPU (device auto), and device gpu is
// refused.
// clang-format off
#define UKES_GPU_USER_BUCKETS(X) X(4) X(16)
// clang-format on

namespace ukes {

#define UKES_USER_BUCKET_TYPE(K) , UserModel<K>
using UserBuckets = DropFirst<void UKES_USER_BUCKETS(UKES_USER_BUCKET_TYPE)>;
using GpuUserBuckets = DropFirst<void UKES_GPU_USER_BUCKETS(UKES_USER_BUCKET_TYPE)>;
#undef UKES_USER_BUCKET_TYPE

// The two lists as ascending arrays, for the size rules below.
#define UKES_USER_BUCKET_ITEM(K) K,
inline constexpr int kUserBucketList[] = {UKES_USER_BUCKETS(UKES_USER_BUCKET_ITEM)};
inline constexpr int kGpuUserBucketList[] = {UKES_GPU_USER_BUCKETS(UKES_USER_BUCKET_ITEM)};
#undef UKES_USER_BUCKET_ITEM

// The first of `buckets` (ascending) that holds `need`; 0 when none does.
template <std::size_t N>
constexpr int smallest_bucket_holding(const int (&buckets)[N], int need) {
  for (const int k : buckets)
    if (need <= k) return k;
  return 0;
}

// The largest coordinates and rows a user model may have.
inline constexpr int kUserModelCapacity = std::end(kUserBucketList)[-1];

// The largest bucket the GPU module holds: user models past it run on the CPU.
inline constexpr int kMaxGpuUserBucket = std::end(kGpuUserBucketList)[-1];

// The smallest bucket that holds n coordinates and `rows` constraint rows; 0 when none does.
inline constexpr int user_bucket_for(int n, int rows) {
  return smallest_bucket_holding(kUserBucketList, n > rows ? n : rows);
}

// The GPU module's bucket for a model in `bucket`: the smallest of UKES_GPU_USER_BUCKETS that
// holds it (padding changes no number of the model, user_model.hpp); 0 when none does, and for
// a built-in model (bucket 0).
inline constexpr int gpu_user_bucket_for(int bucket) {
  return bucket > 0 ? smallest_bucket_holding(kGpuUserBucketList, bucket) : 0;
}

// Both lists ascend (the rules above take the first that holds), and every GPU bucket is a bucket:
// the CPU and the GPU agree on what a bucket holds.
static_assert(std::is_sorted(std::begin(kUserBucketList), std::end(kUserBucketList)));
static_assert(std::is_sorted(std::begin(kGpuUserBucketList), std::end(kGpuUserBucketList)));
#define UKES_GPU_USER_BUCKET_CHECK(K) static_assert(user_bucket_for(K, K) == K);
UKES_GPU_USER_BUCKETS(UKES_GPU_USER_BUCKET_CHECK)
#undef UKES_GPU_USER_BUCKET_CHECK

// Calls f.template operator()<UserModel<capacity>>() for the bucket of that capacity in Buckets
// (UserBuckets, or GpuUserBuckets for the GPU module); false when there is none.
template <class Buckets = UserBuckets, class F>
bool dispatch_user_bucket(int capacity, F&& f) {
  bool found = false;
  for_each_model(Buckets{}, [&]<class M>() {
    if (!found && M::kN == capacity) {
      found = true;
      f.template operator()<M>();
    }
  });
  return found;
}

// The one choice between a user model's bucket (user_bucket > 0, one of Buckets) and a built-in
// model's type (by name): calls f.template operator()<Model>() for it; false when there is none.
template <class Buckets = UserBuckets, class F>
bool dispatch_model_type(int user_bucket, std::string_view name, F&& f) {
  return user_bucket > 0 ? dispatch_user_bucket<Buckets>(user_bucket, f) : dispatch_model(name, f);
}

}  // namespace ukes
