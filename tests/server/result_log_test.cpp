// The result log: chunks numbered from 1 and returned intact whether they stay in memory or are
// spilled to disk beyond the memory budget; the budget is given back and the spill file removed
// when the log goes.
#include "service/server/result_log.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <thread>
#include <vector>

namespace ukes::server {
namespace {

namespace fs = std::filesystem;

ResultLog::Chunk trajectory_chunk(int id, int doubles) {
  ResultLog::Chunk c;
  v1::TrajectoryChunk* t = c.mutable_trajectory();
  t->add_system_ids(id);
  t->set_sample_count(doubles);
  for (int k = 0; k < doubles; ++k) t->add_q(id + 0.25 * k);
  return c;
}

class ResultLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "ukes_log_XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string spill() const { return (dir_ / "job.chunks").string(); }
  fs::path dir_;
};

TEST_F(ResultLogTest, NumbersChunksAndKeepsThemInMemoryWithinTheBudget) {
  MemoryBudget budget(1 << 20);
  {
    ResultLog log(spill(), budget);
    for (int i = 0; i < 10; ++i) EXPECT_EQ(log.append(trajectory_chunk(i, 100)), i + 1);
    EXPECT_EQ(log.size(), 10);
    EXPECT_EQ(log.get(0), nullptr);
    EXPECT_EQ(log.get(11), nullptr);
    for (int i = 0; i < 10; ++i) {
      const auto c = log.get(i + 1);
      ASSERT_NE(c, nullptr);
      EXPECT_EQ(c->sequence(), i + 1);
      EXPECT_EQ(c->trajectory().system_ids(0), i);
    }
    EXPECT_EQ(log.spilled_bytes(), 0);
    EXPECT_FALSE(fs::exists(spill()));
    EXPECT_EQ(budget.used(), log.memory_bytes());
    EXPECT_GT(budget.used(), 10 * 800);
  }
  EXPECT_EQ(budget.used(), 0);
}

TEST_F(ResultLogTest, SpillsBeyondTheBudgetAndReadsBackIdentically) {
  MemoryBudget budget(20000);  // room for about two 8 kB chunks
  std::vector<std::string> sent;
  {
    ResultLog log(spill(), budget);
    for (int i = 0; i < 12; ++i) {
      ResultLog::Chunk c = trajectory_chunk(i, 1000);
      c.set_sequence(i + 1);
      sent.push_back(c.SerializeAsString());
      log.append(std::move(c));
    }
    EXPECT_LE(budget.used(), budget.limit());
    EXPECT_GT(log.spilled_bytes(), 9 * 8000);
    EXPECT_TRUE(fs::exists(spill()));
    // Readers on several threads while nothing is appended any more.
    std::vector<std::thread> readers;
    std::vector<int> mismatches(4, 0);
    for (int r = 0; r < 4; ++r)
      readers.emplace_back([&, r] {
        for (int i = 0; i < 12; ++i)
          if (log.get(i + 1)->SerializeAsString() != sent[static_cast<std::size_t>(i)])
            ++mismatches[static_cast<std::size_t>(r)];
      });
    for (auto& t : readers) t.join();
    EXPECT_EQ(mismatches, std::vector<int>(4, 0));
  }
  EXPECT_FALSE(fs::exists(spill()));
  EXPECT_EQ(budget.used(), 0);
}

TEST_F(ResultLogTest, KeepsChunksThatMustNotBeLostInMemoryWhateverTheBudget) {
  MemoryBudget budget(0);
  ResultLog log(spill(), budget);
  ResultLog::Chunk end;
  end.mutable_end()->set_state(v1::JOB_STATE_SUCCEEDED);
  log.append(std::move(end), /*in_memory=*/true);
  EXPECT_EQ(log.spilled_bytes(), 0);
  EXPECT_GT(log.memory_bytes(), 0);
  EXPECT_EQ(log.get(1)->end().state(), v1::JOB_STATE_SUCCEEDED);
}

TEST_F(ResultLogTest, AnUnwritableSpillFileIsAnErrorNotALoss) {
  MemoryBudget budget(0);
  ResultLog log((dir_ / "missing" / "job.chunks").string(), budget);
  EXPECT_THROW(log.append(trajectory_chunk(0, 10)), std::runtime_error);
}

}  // namespace
}  // namespace ukes::server
