// The disk cache of NVRTC kernels (kernels/backend/cuda/jit/kernel_cache.hpp): an entry gives its
// kernel back whole, an altered or foreign entry is never served, the least recently used entries
// go when the bound is passed, a cache that cannot be written costs only the compile, and a
// second compile of the same kernel is a load.
#include <gtest/gtest.h>

#ifdef UKES_HAVE_NVRTC

#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>

#include "kernels/backend/cuda/jit/kernel_cache.hpp"
#include "kernels/backend/device/system_kernels.hpp"
#include "tests/support/example_models.hpp"
#include "tests/support/scoped_env.hpp"

namespace ukes::jit {
namespace {

namespace fs = std::filesystem;

// A fresh directory per test, removed after it.
class KernelCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ukes_kernel_cache_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  KernelCache cache(std::uintmax_t max_bytes = 1 << 20) const {
    return KernelCache({dir_, max_bytes});
  }
  fs::path dir_;
};

// A kernel as NVRTC returns one: a binary cubin (NULs included) and ptxas's report of it.
CompiledKernel fake_kernel(char fill, std::size_t cubin_bytes = 1000) {
  CompiledKernel k;
  k.cubin = std::string(cubin_bytes, fill);
  k.cubin[3] = '\0';
  k.lowered_name = "_Z6kernelv";
  k.ptxas_report =
      "ptxas info    : Function properties for _Z6kernelv\n"
      "    24 bytes stack frame, 4 bytes spill stores, 8 bytes spill loads\n"
      "ptxas info    : Used 40 registers, used 1 barriers, 24 bytes cumulative stack size\n";
  k.resources = resources_of(k.ptxas_report, k.lowered_name);
  return k;
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
}

TEST_F(KernelCacheTest, AStoredKernelComesBackWhole) {
  const CompiledKernel k = fake_kernel('a');
  EXPECT_FALSE(cache().find("k1").has_value());
  cache().store("k1", k);
  const auto found = cache().find("k1");
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->cubin, k.cubin);
  EXPECT_EQ(found->lowered_name, k.lowered_name);
  EXPECT_EQ(found->ptxas_report, k.ptxas_report);
  EXPECT_EQ(found->resources.registers, 40);
  EXPECT_EQ(found->resources.stack, 24);
  EXPECT_EQ(found->resources.spill_loads, 8);
  EXPECT_TRUE(found->from_cache);
  EXPECT_FALSE(cache().find("k2").has_value());
}

TEST_F(KernelCacheTest, AnAlteredOrForeignEntryIsNeverServed) {
  cache().store("k1", fake_kernel('a'));
  const fs::path entry = cache().entry_path("k1");
  const std::string whole = read(entry);

  std::string flipped = whole;
  flipped[flipped.size() - 10] ^= 0x01;  // one bit of the cubin
  write(entry, flipped);
  EXPECT_FALSE(cache().find("k1").has_value());

  write(entry, whole.substr(0, whole.size() - 1));  // a writer cut short
  EXPECT_FALSE(cache().find("k1").has_value());

  write(cache().entry_path("k2"), whole);  // k1's entry under another name
  EXPECT_FALSE(cache().find("k2").has_value());

  write(entry, whole);
  EXPECT_TRUE(cache().find("k1").has_value());
  cache().store("k1", fake_kernel('b'));  // a recompile replaces the entry
  EXPECT_EQ(cache().find("k1")->cubin, fake_kernel('b').cubin);
}

TEST_F(KernelCacheTest, TheLeastRecentlyUsedGoWhenTheBoundIsPassed) {
  const auto bound = 2 * fs::file_size([&] {
                       cache().store("probe", fake_kernel('p'));
                       return cache().entry_path("probe");
                     }()) +
                     100;
  fs::remove(cache().entry_path("probe"));
  const KernelCache bounded = cache(bound);
  bounded.store("a", fake_kernel('a'));
  bounded.store("b", fake_kernel('b'));
  const auto hour_ago = fs::file_time_type::clock::now() - std::chrono::hours(1);
  fs::last_write_time(bounded.entry_path("a"), hour_ago - std::chrono::minutes(1));
  fs::last_write_time(bounded.entry_path("b"), hour_ago);
  ASSERT_TRUE(bounded.find("a").has_value());  // a is now the most recently used
  bounded.store("c", fake_kernel('c'));
  EXPECT_TRUE(fs::exists(bounded.entry_path("a")));
  EXPECT_FALSE(fs::exists(bounded.entry_path("b")));
  EXPECT_TRUE(fs::exists(bounded.entry_path("c")));
}

TEST_F(KernelCacheTest, ACacheThatCannotBeWrittenCostsOnlyTheCompile) {
  fs::create_directories(dir_);
  write(dir_ / "file", "not a directory");
  const KernelCache blocked({dir_ / "file" / "jit", 1 << 20});
  EXPECT_NO_THROW(blocked.store("k1", fake_kernel('a')));
  EXPECT_FALSE(blocked.find("k1").has_value());
}

TEST(KernelCacheSettings, ComeFromTheEnvironment) {
  {
    ScopedEnv off("UKES_JIT_CACHE", "off");
    EXPECT_FALSE(kernel_cache_settings().has_value());
  }
  {
    ScopedEnv chosen("UKES_JIT_CACHE", "/var/cache/ukes-jit");
    ScopedEnv max("UKES_JIT_CACHE_MAX_MB", "3");
    const auto s = kernel_cache_settings();
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->dir, fs::path("/var/cache/ukes-jit"));
    EXPECT_EQ(s->max_bytes, std::uintmax_t{3} << 20);
  }
  ScopedEnv unset("UKES_JIT_CACHE", nullptr);
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
    EXPECT_EQ(kernel_cache_settings()->dir, fs::path("/xdg/ukes/jit"));
    EXPECT_EQ(kernel_cache_settings()->max_bytes, std::uintmax_t{512} << 20);
  }
  ScopedEnv no_xdg("XDG_CACHE_HOME", nullptr);
  {
    ScopedEnv home("HOME", "/home/someone");
    EXPECT_EQ(kernel_cache_settings()->dir, fs::path("/home/someone/.cache/ukes/jit"));
  }
  ScopedEnv no_home("HOME", nullptr);
  EXPECT_FALSE(kernel_cache_settings().has_value());
}

// What a server's restart, an MPI rank or another server on the node does: the same user model's
// kernel a second time. The first compile fills the cache, the second loads it; another
// architecture is another kernel.
TEST_F(KernelCacheTest, ASecondCompileOfTheSameKernelIsALoad) {
  ScopedEnv chosen("UKES_JIT_CACHE", dir_.c_str());
  const auto model = example_model("duffing");
  FusedKernelSpec spec;
  spec.bucket = model->user->bucket;
  spec.host_size = sizeof(FusedSystem<UserModel<4>, double, Method::kRk4, false>);
  spec.host_align = alignof(FusedSystem<UserModel<4>, double, Method::kRk4, false>);
  const FusedSource source = fused_source(&model->user->program, spec);

  const CompiledKernel first = compile_kernel(source, 90);
  const CompiledKernel second = compile_kernel(source, 90);
  EXPECT_FALSE(first.from_cache);
  EXPECT_TRUE(second.from_cache);
  EXPECT_EQ(second.cubin, first.cubin);
  EXPECT_EQ(second.lowered_name, first.lowered_name);
  EXPECT_EQ(second.ptxas_report, first.ptxas_report);
  EXPECT_EQ(second.resources.registers, first.resources.registers);
  std::printf("duffing FP64 RK4 sm_90: compiled in %.3f s, loaded from the cache in %.4f s\n",
              first.compile_s, second.compile_s);

  const CompiledKernel other_arch = compile_kernel(source, 80);
  EXPECT_FALSE(other_arch.from_cache);
  EXPECT_NE(other_arch.cubin, first.cubin);
  int entries = 0;
  for (const auto& e : fs::directory_iterator(dir_)) entries += e.path().extension() == ".kernel";
  EXPECT_EQ(entries, 2);
}

}  // namespace
}  // namespace ukes::jit

#endif  // UKES_HAVE_NVRTC
