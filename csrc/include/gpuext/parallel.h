// gx::parallel_for: the CPU loops' thread pool (at::parallel_for's shape).
//
//   gx::parallel_for(0, n, kGrain, [&](int64_t begin, int64_t end) { ... });
//
// splits [begin, end) into at most four chunks per thread, each at least
// `grain` long, and returns when every chunk is done. A range no longer than `grain`
// runs on the calling thread, as does a call made while the pool is busy (from
// inside a chunk, or from another JS thread at the same moment): nothing
// nests and nothing waits on the pool. The first exception a chunk throws is
// rethrown to the caller after the others finish.
//
// Threads: the cores this process may run on (sched_getaffinity), or
// GPUEXT_NUM_THREADS. The pool starts at the first parallel call and is never
// destroyed: its threads sleep while idle, and leaving them to the process's
// exit avoids joining threads from static destructors after a worker thread or
// the main thread has gone.
#pragma once
#include <sched.h>

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace gx {

// NOTE [ Parallel grain ]
// The default `grain` of the CPU loops, in elements: 32768 float32 elements
// are 128 KiB per operand, some 5-20 us of a memory-bound loop, about what
// waking a pool thread costs. Below it an op stays on the calling thread.
inline constexpr int64_t kDefaultGrain = int64_t{1} << 15;

namespace parallel_detail {

inline int configured_threads() {
  if (const char* env = std::getenv("GPUEXT_NUM_THREADS")) {
    const int n = std::atoi(env);
    if (n >= 1) return std::min(n, 1024);
  }
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n >= 1) return n;
  }
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

class Pool {
 public:
  explicit Pool(int threads) : threads_(1) {
    // A thread the system refuses (std::system_error) leaves the pool smaller,
    // not broken: chunks are counted by the threads that did start.
    for (int i = 1; i < threads; ++i) {
      try {
        std::thread([this, i] { work(i); }).detach();
      } catch (...) {
        break;
      }
      threads_ = i + 1;
    }
  }

  int threads() const { return threads_; }

  // Runs chunk(i) for i in [0, count) on the pool and the calling thread;
  // false (nothing run) when the pool is busy with another call.
  bool run(int count, const std::function<void(int)>& chunk) {
    std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
    if (!busy.owns_lock()) return false;
    {
      std::lock_guard<std::mutex> lock(m_);
      chunk_ = &chunk;
      count_ = count;
      next_ = 1;  // chunk 0 is the caller's
      pending_ = count - 1;
      error_ = nullptr;
      ++generation_;
    }
    wake_.notify_all();
    execute(0);
    for (;;) {  // the caller takes chunks too, then waits for the rest
      int i;
      {
        std::lock_guard<std::mutex> lock(m_);
        if (next_ >= count_) break;
        i = next_++;
      }
      execute(i);
      finish_one();
    }
    std::unique_lock<std::mutex> lock(m_);
    done_.wait(lock, [this] { return pending_ == 0; });
    chunk_ = nullptr;
    if (error_) std::rethrow_exception(error_);
    return true;
  }

 private:
  void execute(int i) {
    try {
      (*chunk_)(i);
    } catch (...) {
      std::lock_guard<std::mutex> lock(m_);
      if (!error_) error_ = std::current_exception();
    }
  }

  void finish_one() {
    std::lock_guard<std::mutex> lock(m_);
    if (--pending_ == 0) done_.notify_one();
  }

  void work(int) {
    uint64_t seen = 0;
    for (;;) {
      int i;
      {
        std::unique_lock<std::mutex> lock(m_);
        wake_.wait(lock, [&] { return generation_ != seen && next_ < count_; });
        i = next_++;
        if (next_ >= count_) seen = generation_;
      }
      execute(i);
      finish_one();
    }
  }

  int threads_;  // set once, by the constructor
  std::mutex busy_;  // one parallel call at a time; others run inline
  std::mutex m_;
  std::condition_variable wake_, done_;
  const std::function<void(int)>* chunk_ = nullptr;
  int count_ = 0, next_ = 0, pending_ = 0;
  uint64_t generation_ = 0;
  std::exception_ptr error_;
};

inline Pool& pool() {
  static Pool* p = new Pool(configured_threads());  // never destroyed: see above
  return *p;
}

inline thread_local bool in_parallel_region = false;

}  // namespace parallel_detail

// Threads parallel_for may use (1 when GPUEXT_NUM_THREADS=1).
inline int num_threads() { return parallel_detail::pool().threads(); }

template <typename F>
void parallel_for(int64_t begin, int64_t end, int64_t grain, const F& f) {
  const int64_t n = end - begin;
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  using parallel_detail::in_parallel_region;
  if (n <= grain || in_parallel_region) {
    f(begin, end);
    return;
  }
  auto& pool = parallel_detail::pool();
  // Up to four chunks per thread, taken in turn by whichever thread is free:
  // on a machine other processes share, a thread that the OS does not run for
  // a while then holds up a quarter of its share, not all of it.
  const int64_t chunks = std::min<int64_t>(int64_t{4} * pool.threads(), (n + grain - 1) / grain);
  if (chunks <= 1) {
    f(begin, end);
    return;
  }
  const int64_t step = (n + chunks - 1) / chunks;
  const std::function<void(int)> chunk = [&](int i) {
    const int64_t b = begin + i * step;
    const int64_t e = std::min(end, b + step);
    if (b >= e) return;
    const bool was = in_parallel_region;
    in_parallel_region = true;
    try {
      f(b, e);
    } catch (...) {
      in_parallel_region = was;
      throw;
    }
    in_parallel_region = was;
  };
  if (!pool.run(static_cast<int>(chunks), chunk)) f(begin, end);
}

}  // namespace gx
