// cuda_cpu_profile.h -- counters of atensi.cudacpu.profile() (fibers mode only).
//
// A profile build (build flags from profile.py) compiles the kernel with
//   -fsanitize=kernel-address --param asan-instrumentation-with-call-threshold=0
//   -fsanitize-coverage=trace-pc
// so g++ calls __asan_{load,store}N_noabort(addr) before every memory access
// and __sanitizer_cov_trace_pc() at the start of every basic block. No
// sanitizer runtime is linked: the hooks are defined here. The runtime's own
// functions (CUDACPU_RT) carry no instrumentation.
//
// Memory: an access is kept when its address lies in shared memory (the
// registered static __shared__ variables or the extern __shared__ buffer) or
// in an argument array (ranges handed over by Python before the launch);
// registers and locals on a fiber's stack are not memory traffic. At the end
// of each block the accesses are grouped into warp-level requests: the k-th
// execution of one instruction (return address) by each lane of one warp is
// one request (fibers run a warp's lanes one after another, so lockstep is
// rebuilt from per-lane sequence numbers).
//   shared: a 4-byte (or narrower) access is one phase of 32 lanes; 8 bytes
//           two phases of 16 lanes; 16 bytes four phases of 8 lanes. In each
//           phase the wavefronts are the largest number of distinct 4-byte
//           words in one bank (bank = address / 4 mod 32); the same word read
//           by several lanes is a broadcast. Ideal = the active phases;
//           conflicts = wavefronts - ideal.
//   global: sectors = distinct 32-byte sectors that the active lanes' bytes
//           touch; one request per warp-level instruction.
// Basic blocks: per block, each lane's visits of each basic block; a warp
// visits a block max(lanes) times, threads sum(lanes); a visit where the
// lanes' counts differ is divergent.
#pragma once

#include <dlfcn.h>
#include <string>
#include <unordered_map>
#include <vector>

namespace cudacpu::prof {

enum Flag : unsigned char { kStore = 1, kShared = 2, kAsync = 4, kGlobal = 8 };

struct Rec {
  std::uint64_t addr;
  std::uint32_t site;
  std::uint16_t tid;
  std::uint8_t size;
  std::uint8_t flags;
};
struct SiteInfo {
  std::uintptr_t pc;  // offset in the library (0 for an explicit site)
  const char* file;   // explicit sites only
  int line;
  unsigned char flags;
  std::uint64_t requests = 0, wavefronts = 0, ideal = 0, sectors = 0, threads = 0, bytes = 0;
  unsigned size = 0;
};
struct Range {
  std::uintptr_t lo, hi;
};

inline std::uintptr_t g_base = 0;
inline std::vector<Range> g_globals;
inline std::vector<SiteInfo> g_sites;
inline std::unordered_map<std::uint64_t, std::uint32_t> g_site_ids;
inline std::vector<Rec> g_recs;
inline std::unordered_map<std::uintptr_t, std::uint32_t> g_bb_ids;
inline std::vector<std::uintptr_t> g_bb_pc;
inline std::vector<std::uint32_t> g_bb_lane;  // [bb * kMaxThreads + thread], this block
inline std::vector<std::uint64_t> g_bb_thread, g_bb_warp, g_bb_divergent;
inline const char* const kCounterNames[kCounters] = {"bar", "shfl", "vote", "syncwarp", "wmma_mma", "blocks"};
inline std::string g_report;

__attribute__((no_sanitize_address, no_sanitize_coverage)) inline std::uintptr_t base() {
  if (!g_base) {
    Dl_info info;
    if (dladdr(reinterpret_cast<void*>(&base), &info)) g_base = reinterpret_cast<std::uintptr_t>(info.dli_fbase);
  }
  return g_base;
}

// Shared, global (an argument array) or neither (0). A global address becomes
// its offset in its array plus a per-array base: cudaMalloc aligns every array
// to 256 bytes, NumPy only to 16, and sectors must be counted as on the GPU.
__attribute__((no_sanitize_address, no_sanitize_coverage)) inline unsigned space_of(std::uintptr_t& a) {
  const auto dyn = reinterpret_cast<std::uintptr_t>(g_dyn_smem);
  if (a >= dyn && a < dyn + g_dyn_smem_len) return kShared;
  for (unsigned i = 0; i < g_shared_count; ++i) {
    const auto lo = reinterpret_cast<std::uintptr_t>(g_shared_vars[i].p);
    if (a >= lo && a < lo + g_shared_vars[i].n) return kShared;
  }
  for (std::size_t i = 0; i < g_globals.size(); ++i) {
    const Range& r = g_globals[i];
    if (a >= r.lo && a < r.hi) {
      a = (a - r.lo) + (std::uintptr_t(i + 1) << 40);
      return kGlobal;
    }
  }
  return 0;
}

__attribute__((no_sanitize_address, no_sanitize_coverage)) inline std::uint32_t site_id(
    std::uintptr_t pc, const char* file, int line, unsigned char flags) {
  const std::uint64_t key = file ? (reinterpret_cast<std::uint64_t>(file) * 131 + std::uint64_t(line)) * 8 + flags
                                 : (std::uint64_t(pc) * 8 + flags) | (1ull << 63);
  auto it = g_site_ids.find(key);
  if (it != g_site_ids.end()) return it->second;
  const auto id = static_cast<std::uint32_t>(g_sites.size());
  SiteInfo s{};
  s.pc = file ? 0 : pc - base();
  s.file = file;
  s.line = line;
  s.flags = flags;
  g_sites.push_back(s);
  g_site_ids.emplace(key, id);
  return id;
}

__attribute__((no_sanitize_address, no_sanitize_coverage)) inline void access(
    std::uintptr_t pc, const char* file, int line, const void* p, unsigned size, bool store, unsigned extra) {
  if (!g_in_fiber) return;
  g_in_fiber = false;  // the library code below is instrumented too: no recursion
  auto a = reinterpret_cast<std::uintptr_t>(p);
  const unsigned space = space_of(a);
  if (!space) {
    g_in_fiber = true;
    return;
  }
  const auto flags = static_cast<unsigned char>((store ? kStore : 0) | space | extra);
  g_recs.push_back(Rec{a, site_id(pc, file, line, flags), static_cast<std::uint16_t>(g_cur),
                       static_cast<std::uint8_t>(size > 255 ? 255 : size), flags});
  g_in_fiber = true;
}

__attribute__((no_sanitize_address, no_sanitize_coverage)) inline void block_begin() { g_recs.clear(); }

// One warp-level request: wavefronts (shared) or sectors (global).
struct Group {
  std::uint32_t site;
  unsigned mask;
  unsigned size;
  std::uint64_t addr[kWarp];
};

__attribute__((no_sanitize_address, no_sanitize_coverage)) inline void shared_request(const Group& g, SiteInfo& s) {
  const unsigned size = g.size < 4 ? 4 : g.size;
  const unsigned per_phase = size <= 4 ? 32 : size <= 8 ? 16 : 8;
  for (unsigned ph = 0; ph < kWarp / per_phase; ++ph) {
    std::uint64_t words[kWarp][8];  // per bank: distinct words seen in this phase
    unsigned count[kWarp] = {};
    bool active = false;
    for (unsigned l = ph * per_phase; l < (ph + 1) * per_phase; ++l) {
      if (!(g.mask >> l & 1u)) continue;
      active = true;
      const std::uint64_t first = g.addr[l] / 4, last = (g.addr[l] + (g.size ? g.size : 1) - 1) / 4;
      for (std::uint64_t w = first; w <= last; ++w) {
        const unsigned b = static_cast<unsigned>(w % kWarp);
        bool seen = false;
        for (unsigned i = 0; i < count[b] && i < 8; ++i) seen |= words[b][i] == w;
        if (!seen) {
          if (count[b] < 8) words[b][count[b]] = w;
          ++count[b];
        }
      }
    }
    if (!active) continue;
    unsigned most = 1;
    for (unsigned b = 0; b < kWarp; ++b) most = count[b] > most ? count[b] : most;
    s.wavefronts += most;
    ++s.ideal;
  }
}

__attribute__((no_sanitize_address, no_sanitize_coverage)) inline void global_request(const Group& g, SiteInfo& s) {
  std::uint64_t seen[kWarp * 2];
  unsigned n = 0;
  for (unsigned l = 0; l < kWarp; ++l) {
    if (!(g.mask >> l & 1u)) continue;
    const std::uint64_t first = g.addr[l] / 32, last = (g.addr[l] + (g.size ? g.size : 1) - 1) / 32;
    for (std::uint64_t sec = first; sec <= last; ++sec) {
      bool dup = false;
      for (unsigned i = 0; i < n && !dup; ++i) dup = seen[i] == sec;
      if (!dup && n < kWarp * 2) seen[n++] = sec;
    }
  }
  s.sectors += n;
}

// Optional trace of one warp of one block (profile(warp=...)): its raw records,
// so that Python can show which lane touched which bank or sector.
inline int g_trace_warp = -1;
inline uint3 g_trace_block{};
inline std::vector<Rec> g_trace;
constexpr std::size_t kTraceMax = 1u << 20;

__attribute__((no_sanitize_address, no_sanitize_coverage)) inline void block_end(unsigned n) {
  ++g_count[kBlocks];
  if (g_trace_warp >= 0 && g_bid.x == g_trace_block.x && g_bid.y == g_trace_block.y && g_bid.z == g_trace_block.z)
    for (const Rec& r : g_recs)
      if (r.tid / kWarp == unsigned(g_trace_warp) && g_trace.size() < kTraceMax) g_trace.push_back(r);
  const std::size_t nsites = g_sites.size();
  std::vector<std::uint32_t> occ(nsites * n, 0);
  std::unordered_map<std::uint64_t, std::uint32_t> index;
  std::vector<Group> groups;
  index.reserve(g_recs.size() / 16 + 16);
  for (const Rec& r : g_recs) {
    const std::uint32_t k = occ[std::size_t(r.site) * n + r.tid]++;
    const unsigned warp = r.tid / kWarp, lane = r.tid % kWarp;
    const std::uint64_t key = (std::uint64_t(r.site) << 40) | (std::uint64_t(warp) << 32) | k;
    auto [it, fresh] = index.emplace(key, static_cast<std::uint32_t>(groups.size()));
    if (fresh) groups.push_back(Group{r.site, 0, 0, {}});
    Group& g = groups[it->second];
    g.mask |= 1u << lane;
    g.addr[lane] = r.addr;
    g.size = r.size > g.size ? r.size : g.size;
  }
  for (const Group& g : groups) {
    SiteInfo& s = g_sites[g.site];
    ++s.requests;
    const unsigned lanes = static_cast<unsigned>(std::popcount(g.mask));
    s.threads += lanes;
    s.bytes += std::uint64_t(lanes) * g.size;
    s.size = g.size > s.size ? g.size : s.size;
    if (s.flags & kShared) shared_request(g, s);
    else global_request(g, s);
  }
  g_recs.clear();
  // Basic blocks: warp visits, thread visits, divergent visits.
  const std::size_t nbb = g_bb_pc.size();
  g_bb_thread.resize(nbb, 0);
  g_bb_warp.resize(nbb, 0);
  g_bb_divergent.resize(nbb, 0);
  if (g_bb_lane.size() < nbb * kMaxThreads) g_bb_lane.resize(nbb * kMaxThreads, 0);
  for (std::size_t b = 0; b < nbb; ++b) {
    std::uint32_t* c = &g_bb_lane[b * kMaxThreads];
    for (unsigned w = 0; w * kWarp < n; ++w) {
      std::uint32_t most = 0, least = ~0u;
      std::uint64_t sum = 0;
      for (unsigned t = w * kWarp; t < n && t < (w + 1) * kWarp; ++t) {
        sum += c[t];
        most = c[t] > most ? c[t] : most;
        least = c[t] < least ? c[t] : least;
        c[t] = 0;
      }
      g_bb_thread[b] += sum;
      g_bb_warp[b] += most;
      if (most != least) g_bb_divergent[b] += most - least;
    }
  }
}

__attribute__((no_sanitize_address, no_sanitize_coverage)) inline void basic_block(std::uintptr_t pc) {
  if (!g_in_fiber) return;
  g_in_fiber = false;  // the library code below is instrumented too: no recursion
  auto [it, fresh] = g_bb_ids.emplace(pc, static_cast<std::uint32_t>(g_bb_pc.size()));
  if (fresh) {
    g_bb_pc.push_back(pc - base());
    if (g_bb_lane.size() < g_bb_pc.size() * kMaxThreads) g_bb_lane.resize(g_bb_pc.size() * 2 * kMaxThreads, 0);
  }
  ++g_bb_lane[std::size_t(it->second) * kMaxThreads + g_cur];
  g_in_fiber = true;
}

}  // namespace cudacpu::prof

#define CUDACPU_PROF_HOOK extern "C" __attribute__((visibility("hidden"), no_sanitize_address, no_sanitize_coverage))
#define CUDACPU_PROF_MEM(N)                                                                              \
  CUDACPU_PROF_HOOK void __asan_load##N##_noabort(void* p) {                                             \
    ::cudacpu::prof::access(reinterpret_cast<std::uintptr_t>(__builtin_return_address(0)), nullptr, 0, p, N, false); \
  }                                                                                                      \
  CUDACPU_PROF_HOOK void __asan_store##N##_noabort(void* p) {                                            \
    ::cudacpu::prof::access(reinterpret_cast<std::uintptr_t>(__builtin_return_address(0)), nullptr, 0, p, N, true); \
  }
CUDACPU_PROF_MEM(1)
CUDACPU_PROF_MEM(2)
CUDACPU_PROF_MEM(4)
CUDACPU_PROF_MEM(8)
CUDACPU_PROF_MEM(16)
#undef CUDACPU_PROF_MEM
CUDACPU_PROF_HOOK void __asan_loadN_noabort(void* p, std::size_t n) {
  ::cudacpu::prof::access(reinterpret_cast<std::uintptr_t>(__builtin_return_address(0)), nullptr, 0, p,
                          static_cast<unsigned>(n), false);
}
CUDACPU_PROF_HOOK void __asan_storeN_noabort(void* p, std::size_t n) {
  ::cudacpu::prof::access(reinterpret_cast<std::uintptr_t>(__builtin_return_address(0)), nullptr, 0, p,
                          static_cast<unsigned>(n), true);
}
CUDACPU_PROF_HOOK void __asan_handle_no_return() {}
CUDACPU_PROF_HOOK void __asan_before_dynamic_init(const char*) {}
CUDACPU_PROF_HOOK void __asan_after_dynamic_init() {}
CUDACPU_PROF_HOOK void __sanitizer_cov_trace_pc() {
  ::cudacpu::prof::basic_block(reinterpret_cast<std::uintptr_t>(__builtin_return_address(0)));
}

// Python's side: reset, the argument arrays, and the report of the last launches.
CUDACPU_EXPORT __attribute__((no_sanitize_address, no_sanitize_coverage)) void cudacpu_prof_reset() {
  using namespace ::cudacpu::prof;
  g_globals.clear();
  g_sites.clear();
  g_site_ids.clear();
  g_recs.clear();
  g_bb_ids.clear();
  g_bb_pc.clear();
  g_bb_thread.clear();
  g_bb_warp.clear();
  g_bb_divergent.clear();
  std::fill(g_bb_lane.begin(), g_bb_lane.end(), 0u);
  for (auto& c : g_count) c = 0;
}
CUDACPU_EXPORT __attribute__((no_sanitize_address, no_sanitize_coverage)) void cudacpu_prof_global(
    const void* p, unsigned long long n) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  ::cudacpu::prof::g_globals.push_back(::cudacpu::prof::Range{a, a + n});
}
// One line per access site, basic block and counter (tab-separated).
CUDACPU_EXPORT __attribute__((no_sanitize_address, no_sanitize_coverage)) const char* cudacpu_prof_report() {
  using namespace ::cudacpu::prof;
  g_report.clear();
  char buf[512];
  for (const SiteInfo& s : g_sites) {
    std::snprintf(buf, sizeof buf, "site\t%lx\t%s\t%d\t%u\t%u\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\n",
                  static_cast<unsigned long>(s.pc), s.file ? s.file : "", s.line, s.flags, s.size,
                  (unsigned long long)s.requests, (unsigned long long)s.wavefronts, (unsigned long long)s.ideal,
                  (unsigned long long)s.sectors, (unsigned long long)s.threads, (unsigned long long)s.bytes);
    g_report += buf;
  }
  for (std::size_t b = 0; b < g_bb_pc.size() && b < g_bb_thread.size(); ++b) {
    std::snprintf(buf, sizeof buf, "bb\t%lx\t%llu\t%llu\t%llu\n", static_cast<unsigned long>(g_bb_pc[b]),
                  (unsigned long long)g_bb_thread[b], (unsigned long long)g_bb_warp[b],
                  (unsigned long long)g_bb_divergent[b]);
    g_report += buf;
  }
  for (unsigned c = 0; c < kCounters; ++c) {
    std::snprintf(buf, sizeof buf, "count\t%s\t%llu\n", kCounterNames[c], (unsigned long long)g_count[c]);
    g_report += buf;
  }
  return g_report.c_str();
}
// The traced warp: choose it (warp < 0: none) before a launch, read its records after.
CUDACPU_EXPORT __attribute__((no_sanitize_address, no_sanitize_coverage)) void cudacpu_prof_trace(
    unsigned bx, unsigned by, unsigned bz, int warp) {
  using namespace ::cudacpu::prof;
  g_trace_block = uint3{bx, by, bz};
  g_trace_warp = warp;
  g_trace.clear();
}
// One line per record: site index (order of the report's site lines), lane, address, size.
CUDACPU_EXPORT __attribute__((no_sanitize_address, no_sanitize_coverage)) const char* cudacpu_prof_trace_report() {
  using namespace ::cudacpu::prof;
  g_report.clear();
  char buf[128];
  for (const Rec& r : g_trace) {
    std::snprintf(buf, sizeof buf, "%u\t%u\t%llx\t%u\n", r.site, unsigned(r.tid % ::cudacpu::kWarp),
                  (unsigned long long)r.addr, unsigned(r.size));
    g_report += buf;
  }
  return g_report.c_str();
}
