// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
// A collx communicator made through the c10d store; its error text.
#include "comm.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "work.hpp"

namespace collx_torch {

namespace {

// libcollx reads the comm's timeouts from the environment only
// (COLLX_TIMEOUT_MS, COLLX_BOOTSTRAP_TIMEOUT): set them around the init,
// one init at a time, and put back what was there.
std::mutex env_mu;

class EnvOverride {
 public:
  void set(const char* name, const std::string& value) {
    const char* old = getenv(name);
    saved_.push_back({name, old != nullptr, old ? old : ""});
    setenv(name, value.c_str(), 1);
  }
  ~EnvOverride() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->had)
        setenv(it->name, it->value.c_str(), 1);
      else
        unsetenv(it->name);
    }
  }

 private:
  struct Saved {
    const char* name;
    bool had;
    std::string value;
  };
  std::vector<Saved> saved_;
};

long envLong(const char* name, long def) {
  const char* s = getenv(name);
  if (!s || !*s)
    return def;
  char* end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || *end || v < 0)
    throw std::runtime_error(std::string("collx: ") + name + "=" + s +
                             " is not a non-negative integer");
  return v;
}

// Half of RLIMIT_MEMLOCK (collectives on unregistered buffers pin theirs
// against the same limit); where it does not apply (root, unlimited),
// half of the node's memory.  A steady DDP step must not thrash: its
// buckets hold every gradient, 4 bytes a parameter, so a fixed 1 GiB
// made models above about 270M fp32 parameters re-register every step.
size_t defaultRegBytes() {
  struct rlimit rl;
  if (geteuid() == 0 || getrlimit(RLIMIT_MEMLOCK, &rl) || rl.rlim_cur == RLIM_INFINITY) {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0)
      return size_t(1) << 30;
    return static_cast<size_t>(pages) / 2 * static_cast<size_t>(page);
  }
  return static_cast<size_t>(rl.rlim_cur / 2);
}

// Registrations per group: enough for every bucket of a large model and
// the tensors around it; a small share of COLLX_MAX_MRS_PER_FD.
constexpr long kDefaultRegEntries = 1024;

const std::string kKeyJoined = "collx/joined";
const std::string kKeyId = "collx/uid/";

std::string rankOf(int rank, int size) {
  return "rank " + std::to_string(rank) + " of " + std::to_string(size);
}

} // namespace

Comm::Comm(struct collx_comm* comm, int rank, int size, unsigned int timeout_ms)
    : comm_(comm), rank_(rank), size_(size), timeout_ms_(timeout_ms) {
  cache_ = std::make_unique<RegCache>(
      comm, static_cast<size_t>(envLong("COLLX_TORCH_REG_ENTRIES", kDefaultRegEntries)),
      static_cast<size_t>(envLong("COLLX_TORCH_REG_MAX_BYTES",
                                  static_cast<long>(defaultRegBytes()))),
      static_cast<size_t>(envLong("COLLX_TORCH_REG_MIN_BYTES", 16384)));
}

std::shared_ptr<Comm> Comm::create(const c10::intrusive_ptr<c10d::Store>& store,
                                   int rank, int size,
                                   std::chrono::milliseconds timeout) {
  const std::string who = rankOf(rank, size);
  long long ms = timeout.count();
  // The module bounds a comm's timeout: say so rather than shorten it.
  TORCH_CHECK(ms <= static_cast<long long>(COLLX_MAX_TIMEOUT_MS), "collx: ", who,
              ": a timeout of ", ms, " ms is longer than the longest the collx module "
              "honours (COLLX_MAX_TIMEOUT_MS, ", COLLX_MAX_TIMEOUT_MS,
              " ms: one hour); pass timeout=timedelta(hours=1) or less");
  if (ms <= 0)
    ms = COLLX_MAX_TIMEOUT_MS;

  // The n-th process group made on this store by a rank meets the n-th of
  // every other rank: each init adds @size joins, and no rank can start
  // the next init before all have joined this one (init is collective).
  const int64_t joined = store->add(kKeyJoined, 1);
  const std::string key = kKeyId + std::to_string((joined - 1) / size);

  struct collx_unique_id id;
  if (rank == 0) {
    int err = collx_get_unique_id(&id);
    if (err) {
      std::string msg = std::string(collx_strerror(err)) + ": " +
          collx_comm_last_error(nullptr);
      // Tell the others at once rather than let them wait for the store.
      std::string v = "E" + msg;
      store->set(key, std::vector<uint8_t>(v.begin(), v.end()));
      throw std::runtime_error("collx: rank 0 could not make the unique id: " + msg);
    }
    std::vector<uint8_t> v(1 + sizeof(id));
    v[0] = 'I';
    memcpy(v.data() + 1, &id, sizeof(id));
    store->set(key, v);
  } else {
    // Waits for rank 0 up to the store's timeout (init_process_group's).
    auto v = store->get(key);
    if (!v.empty() && v[0] == 'E')
      throw std::runtime_error("collx: " + who + ": rank 0 could not make the unique id: " +
                               std::string(v.begin() + 1, v.end()));
    if (v.size() != 1 + sizeof(id) || v[0] != 'I')
      throw std::runtime_error("collx: " + who + ": the store's " + key +
                               " is not a collx unique id (" + std::to_string(v.size()) +
                               " bytes)");
    memcpy(&id, v.data() + 1, sizeof(id));
  }

  struct collx_comm* comm = nullptr;
  int err;
  std::string init_error;
  {
    std::lock_guard<std::mutex> g(env_mu);
    EnvOverride env;
    env.set("COLLX_TIMEOUT_MS", std::to_string(ms));
    if (!getenv("COLLX_BOOTSTRAP_TIMEOUT"))
      env.set("COLLX_BOOTSTRAP_TIMEOUT",
              std::to_string(std::min<long long>(86400, (ms + 999) / 1000)));
    err = collx_comm_init_rank(&comm, size, &id, rank);
    if (err)
      init_error = collx_comm_last_error(nullptr);
  }
  if (err)
    throw std::runtime_error("collx: " + who + ": init failed: " + collx_strerror(err) +
                             (init_error.empty() ? "" : ": " + init_error));
  return std::shared_ptr<Comm>(new Comm(comm, rank, size, static_cast<unsigned int>(ms)));
}

Comm::~Comm() {
  destroy();
  if (wake_fd_ >= 0)
    close(wake_fd_);
}

std::string Comm::device() const {
  auto* c = comm_.load();
  return c ? collx_comm_device(c) : "";
}

unsigned int Comm::globalId() const {
  auto* c = comm_.load();
  return c ? collx_comm_global_id(c) : 0;
}

std::string Comm::submitError(const std::string& what, int err) {
  auto* c = comm_.load();
  std::string detail = c ? collx_comm_last_error(c) : "the process group was destroyed";
  if (err == -EPIPE) {
    std::lock_guard<std::mutex> g(err_mu_);
    return "collx " + what + ": " + rankOf(rank_, size_) +
        ": the communicator failed earlier (" +
        (first_error_.empty() ? detail : first_error_) +
        "); destroy the process group and make a new one";
  }
  return "collx " + what + ": " + rankOf(rank_, size_) + ": cannot submit: " +
      collx_strerror(err) + (detail.empty() ? "" : " (" + detail + ")");
}

std::string Comm::opError(const std::string& what, const struct collx_completion& c) {
  // torch's users (and its own tests) look for " Timed out " and
  // " closed " in a backend's errors, as gloo words them.
  std::string s = "collx " + what + " failed on " + rankOf(rank_, size_) + ": ";
  if (c.status == -ETIMEDOUT)
    s += "Timed out: no progress within the process group's timeout (" +
        std::to_string(timeout_ms_) + " ms)";
  else if (c.status == -ECONNRESET)
    s += "Connection closed by a peer, or its RDMA queue pair failed";
  else
    s += collx_strerror(c.status);
  if (c.status == -ECANCELED) {
    s += " (the process group was destroyed or aborted)";
  } else {
    if (c.failed_rank != COLLX_RANK_NONE)
      s += ": failing rank " + std::to_string(c.failed_rank);
    else
      s += ": no single rank to blame";
    s += ", phase " + std::string(collx_phase_name(static_cast<enum collx_phase>(c.phase))) +
        " step " + std::to_string(c.step);
    // libcollx's text adds the peer's host and address when it is about
    // this op ("... op 12 of comm 7 on rank 1: ...; rank 2 (node2, 10.77.0.12), ...").
    auto* comm = comm_.load();
    std::string le = comm ? collx_comm_last_error(comm) : "";
    if (!le.empty() && le.find("op " + std::to_string(c.op_id) + " ") != std::string::npos)
      s += " [libcollx: " + le + "]";
  }
  std::lock_guard<std::mutex> g(err_mu_);
  if (first_error_.empty())
    first_error_ = s;
  return s;
}

void Comm::countPaths(const struct collx_completion& c) {
  std::lock_guard<std::mutex> g(stats_mu_);
  paths_.ops++;
  if (c.mem & (COLLX_MEM_ZERO_COPY | COLLX_MEM_PLACED))
    paths_.zero_copy++;
  if (c.mem & COLLX_MEM_BOUNCED)
    paths_.bounced++;
  if (c.mem & COLLX_MEM_STAGED)
    paths_.staged++;
}

PathStats Comm::paths() {
  std::lock_guard<std::mutex> g(stats_mu_);
  return paths_;
}

void Comm::destroy() {
  stopWatcher();
  auto* c = comm_.exchange(nullptr);
  if (!c)
    return;
  // Registrations go with the comm; works in flight end with ECANCELED.
  cache_->forget();
  collx_comm_destroy(c);
  std::deque<c10::intrusive_ptr<WorkCollx>> left;
  {
    std::lock_guard<std::mutex> g(pend_mu_);
    left.swap(pending_);
  }
  // Finish what their users never waited for (records say ECANCELED).
  for (auto& w : left)
    w->poll();
}

} // namespace collx_torch
