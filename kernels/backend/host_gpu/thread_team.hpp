// ThreadTeam: a faithful CPU emulation of a team (kernels/linalg/team.hpp), e.g. a GPU warp: the
// host device API's warp path (host_api.hpp) and the team tests run on it. Each lane is its own
// std::thread running the same function; the collectives meet at a std::barrier, so a lane sees
// another lane's data only through them (or through memory after a sync), as on the GPU:
//   sum:       every lane deposits its value in its slot, barrier, every lane adds the slots
//              0..size-1 in order (from zero): the same bits everywhere;
//   broadcast: every lane deposits, barrier, every lane reads slot src;
//   sync:      a barrier (which also orders memory among the threads).
// Every collective also deposits what it is (kind, source lane, sequence number) and checks that
// all lanes are at the same one: a non-uniform call pattern (a lane skipping or adding a
// collective, broadcasts from different sources) makes run() throw instead of going unseen. A
// lane that returns drops out of the run's barrier, so divergence is reported, never a deadlock.
// The lane threads live as long as the team (run() hands them work), so a test can run many
// small team functions cheaply.
#pragma once

#include <atomic>
#include <barrier>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

namespace ukes::host_gpu {

class ThreadTeam {
 public:
  enum class Collective { kNone, kSync, kSum, kBroadcast };

  // One lane's view: the team concept.
  class Lane {
   public:
    Lane(ThreadTeam& team, int rank) : team_(&team), rank_(rank) {}
    int rank() const { return rank_; }
    int size() const { return team_->size_; }
    void sync() const { team_->meet(rank_, Collective::kSync, 0.0, 0); }
    template <class T>
    T sum(T x) const {
      const std::vector<Slot>& slots = team_->meet(rank_, Collective::kSum, double(x), 0);
      T total = T(0);
      for (const Slot& s : slots) total += static_cast<T>(s.value);
      return total;
    }
    template <class T>
    T broadcast(T x, int src) const {
      const std::vector<Slot>& slots = team_->meet(rank_, Collective::kBroadcast, double(x), src);
      return static_cast<T>(slots[static_cast<std::size_t>(src)].value);
    }
    // The last collective this lane took part in (tests of the "ends with a sync" contract).
    Collective last_collective() const { return team_->state(rank_).last; }

   private:
    ThreadTeam* team_;
    int rank_;
  };

  explicit ThreadTeam(int size)
      : size_(size),
        slots_{std::vector<Slot>(static_cast<std::size_t>(size)),
               std::vector<Slot>(static_cast<std::size_t>(size))},
        lanes_(static_cast<std::size_t>(size)),
        gate_(size + 1) {
    threads_.reserve(static_cast<std::size_t>(size));
    for (int r = 0; r < size; ++r) threads_.emplace_back([this, r] { serve(r); });
  }

  ~ThreadTeam() {
    stop_ = true;
    gate_.arrive_and_wait();  // the lanes see stop_ and leave
    for (std::thread& t : threads_) t.join();
  }
  ThreadTeam(const ThreadTeam&) = delete;
  ThreadTeam& operator=(const ThreadTeam&) = delete;

  int size() const { return size_; }

  // Runs f(lane) on every lane's thread and waits for them. Throws std::logic_error when the lanes
  // did not call the same collectives in the same order, and rethrows what a lane threw.
  void run(const std::function<void(const Lane&)>& f) {
    std::barrier<> meeting(size_);
    meeting_ = &meeting;
    job_ = &f;
    diverged_ = false;
    for (LaneState& l : lanes_) l = LaneState{};
    gate_.arrive_and_wait();  // start
    gate_.arrive_and_wait();  // every lane done
    meeting_ = nullptr;
    job_ = nullptr;
    for (LaneState& l : lanes_)
      if (l.error) std::rethrow_exception(l.error);
    if (diverged_) throw std::logic_error("team lanes called different collectives");
  }

 private:
  struct Slot {
    double value = 0.0;  // float and double alike, exactly
    Collective kind = Collective::kNone;
    int src = 0;
    std::uint64_t sequence = 0;
  };
  struct LaneState {
    std::uint64_t sequence = 0;
    Collective last = Collective::kNone;
    std::exception_ptr error;
  };

  LaneState& state(int rank) { return lanes_[static_cast<std::size_t>(rank)]; }

  void serve(int rank) {
    for (;;) {
      gate_.arrive_and_wait();
      if (stop_) return;
      try {
        (*job_)(Lane(*this, rank));
      } catch (...) {
        state(rank).error = std::current_exception();
      }
      meeting_->arrive_and_drop();
      gate_.arrive_and_wait();
    }
  }

  // Deposits, waits for every lane, checks that all met at the same collective, and returns the
  // slots of this meeting. Consecutive meetings alternate between two slot sets: a lane can be at
  // most one meeting ahead of another (it passed the barrier the other has reached), so the set it
  // writes is never the one another lane still reads.
  const std::vector<Slot>& meet(int rank, Collective kind, double value, int src) {
    LaneState& me = state(rank);
    std::vector<Slot>& slots = slots_[me.sequence % 2];
    slots[static_cast<std::size_t>(rank)] = Slot{value, kind, src, me.sequence};
    meeting_->arrive_and_wait();
    for (const Slot& s : slots)
      if (s.kind != kind || s.src != src || s.sequence != me.sequence) diverged_ = true;
    ++me.sequence;
    me.last = kind;
    return slots;
  }

  int size_;
  std::vector<Slot> slots_[2];
  std::vector<LaneState> lanes_;
  std::barrier<> gate_;  // the lanes and run(): start and end of a job
  std::barrier<>* meeting_ = nullptr;
  const std::function<void(const Lane&)>* job_ = nullptr;
  std::atomic<bool> stop_{false};
  std::atomic<bool> diverged_{false};
  std::vector<std::thread> threads_;
};

}  // namespace ukes::host_gpu
