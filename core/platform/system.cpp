#include "core/platform/system.h"

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <sstream>

namespace tn {

double peak_rss_mb() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux reports KiB
}

double physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return 0.0;
  return static_cast<double>(pages) * static_cast<double>(page_size);
}

namespace {

/// The number in the first line of `path`; 0 when it is missing or not a number ("max").
double read_limit(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!std::getline(in, line) || line.empty() || line.find_first_not_of("0123456789") != std::string::npos)
    return 0.0;
  return std::stod(line);
}

/// This process's cgroup memory limit in bytes (v2, else v1), 0 when none or unknown.
double cgroup_limit() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  double v1 = 0.0;
  while (std::getline(in, line)) {
    const size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    if (line.compare(0, a, "0") == 0 && controllers.empty()) {
      if (const double v2 = read_limit("/sys/fs/cgroup" + path + "/memory.max"); v2 > 0) return v2;
    } else if (controllers == "memory") {
      v1 = read_limit("/sys/fs/cgroup/memory" + path + "/memory.limit_in_bytes");
    }
  }
  return v1 >= 1e18 ? 0.0 : v1;  // v1 writes a huge number for "no limit"
}

}  // namespace

MemoryLimit memory_limit() {
  MemoryLimit limit{physical_memory_bytes(), "this machine's memory"};
  auto lower = [&](double bytes, const char* source) {
    if (bytes > 0 && (limit.bytes <= 0 || bytes < limit.bytes)) limit = {bytes, source};
  };
  struct rlimit as {};
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY)
    lower(static_cast<double>(as.rlim_cur), "the address-space limit (ulimit -v)");
  lower(cgroup_limit(), "its cgroup's memory limit");
  return limit;
}

CpuInfo cpu_info() {
  CpuInfo info;
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  bool have_model = false, have_flags = false;
  while ((!have_model || !have_flags) && std::getline(in, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
    const std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    if (key == "model name" && !have_model) {
      info.model = value;
      have_model = true;
    } else if (key == "flags" && !have_flags) {
      std::istringstream flags(value);
      for (std::string flag; flags >> flag;) {
        info.avx2 |= flag == "avx2";
        info.avx512f |= flag == "avx512f";
        info.avx512_bf16 |= flag == "avx512_bf16";
        info.amx_bf16 |= flag == "amx_bf16";
      }
      have_flags = true;
    }
  }
  return info;
}

std::string utc_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace tn
