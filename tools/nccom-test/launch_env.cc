// Launcher detection for nccom-test (see launch_env.h and
// docs/tools/nccom-test.md, "Launch modes").
#include "launch_env.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <sstream>

extern char** environ;

namespace nccom::nccomtest {
namespace {

Error env_error(std::string msg) { return make_error(NRT_INVALID, std::move(msg)); }

const std::string* find(const EnvMap& env, const char* name) {
  auto it = env.find(name);
  return it == env.end() || it->second.empty() ? nullptr : &it->second;
}

// An integer variable in [lo, hi]; the error names it.
Result<int> int_var(const EnvMap& env, const char* name, long lo, long hi) {
  const std::string* v = find(env, name);
  if (v == nullptr) return env_error(std::string(name) + " is not set");
  char* end = nullptr;
  errno = 0;
  const long n = std::strtol(v->c_str(), &end, 10);
  if (*end != '\0' || errno != 0 || n < lo || n > hi) {
    return env_error(std::string(name) + "=" + *v + " is not an integer in " + std::to_string(lo) +
                     ".." + std::to_string(hi));
  }
  return static_cast<int>(n);
}

// -r, -N and --root against a launcher's world; -N on one machine splits it
// into emulated hosts as a local launch does.
Status apply_options(const Options& o, bool one_machine, Placement& p) {
  const std::string who = launcher_name(p.launcher);
  if (o.ranks_given && o.ranks != p.size) {
    return env_error("-r " + std::to_string(o.ranks) + " but " + who + " started " +
                     std::to_string(p.size) + " processes (leave -r out under a launcher)");
  }
  if (o.root >= p.size) {
    return env_error("--root " + std::to_string(o.root) + " is not a rank of the " +
                     std::to_string(p.size) + " " + who + " started");
  }
  if (!o.nodes_given) return {};
  if (one_machine) {
    if (o.nodes > p.size) {
      return env_error("-N " + std::to_string(o.nodes) + " is more than the " +
                       std::to_string(p.size) +
                       " ranks: every emulated host needs at least one rank");
    }
    p.hosts = o.nodes;
    split_hosts(p.size, o.nodes, p.rank, p);
    return {};
  }
  if (o.nodes != p.hosts) {
    return env_error("-N " + std::to_string(o.nodes) + " but " + who + " placed the ranks on " +
                     std::to_string(p.hosts) +
                     " machines (-N emulates hosts only when all ranks share one)");
  }
  return {};
}

// The root address of a launcher job: NEURON_RT_ROOT_COMM_ID, else loopback
// with a port from the job id when every rank is on this machine.
Status pick_root(const EnvMap& env, bool one_machine, const std::string& job_key,
                 const char* job_vars, Placement& p) {
  if (const std::string* id = find(env, kRootCommVar)) {
    p.root_comm_id = *id;
    p.root_source = "NEURON_RT_ROOT_COMM_ID";
    return {};
  }
  if (!one_machine) {
    return env_error(
        std::string("the ranks span ") + std::to_string(p.hosts) + " machines and " +
        "NEURON_RT_ROOT_COMM_ID is not set: set it to an address:port of rank 0's machine "
        "that every machine can reach (e.g. mpirun -x NEURON_RT_ROOT_COMM_ID=10.0.0.1:29500)");
  }
  if (job_key.empty()) {
    return env_error(std::string("no job id (") + job_vars +
                     ") to derive a port from: set NEURON_RT_ROOT_COMM_ID");
  }
  p.root_comm_id = "127.0.0.1:" + std::to_string(derived_port(job_key));
  p.root_source = std::string("loopback, port derived from ") + job_vars;
  return {};
}

Result<Placement> from_child(const EnvMap& env) {
  Placement p;
  p.launcher = Launcher::LocalChild;
  const std::string& v = env.at(kChildVar);
  std::istringstream in(v);
  char c1 = 0, c2 = 0, c3 = 0, c4 = 0, c5 = 0;
  if (!(in >> p.rank >> c1 >> p.size >> c2 >> p.host >> c3 >> p.local_rank >> c4 >> p.local_n >>
        c5 >> p.hosts) ||
      c1 != ',' || c2 != ',' || c3 != ',' || c4 != ',' || c5 != ',' || !in.eof() || p.size < 1 ||
      p.rank < 0 || p.rank >= p.size || p.local_n < 1 || p.local_rank < 0 ||
      p.local_rank >= p.local_n || p.hosts < 1 || p.hosts > p.size || p.host < 0 ||
      p.host >= p.hosts) {
    return env_error(std::string(kChildVar) + "=" + v +
                     " is malformed (rank,size,host,local_rank,local_n,hosts)");
  }
  const std::string* id = find(env, kRootCommVar);
  if (id == nullptr)
    return env_error(std::string(kChildVar) + " is set but NEURON_RT_ROOT_COMM_ID is not");
  p.root_comm_id = *id;
  p.root_source = "the local parent";
  return p;
}

Result<Placement> from_openmpi(const EnvMap& env, const Options& o) {
  Placement p;
  p.launcher = Launcher::Mpirun;
  auto size = int_var(env, "OMPI_COMM_WORLD_SIZE", 1, 1 << 20);
  if (!size) return size.take_error();
  auto rank = int_var(env, "OMPI_COMM_WORLD_RANK", 0, *size - 1);
  if (!rank) return rank.take_error();
  auto lsize = int_var(env, "OMPI_COMM_WORLD_LOCAL_SIZE", 1, *size);
  if (!lsize) return lsize.take_error();
  auto lrank = int_var(env, "OMPI_COMM_WORLD_LOCAL_RANK", 0, *lsize - 1);
  if (!lrank) return lrank.take_error();
  p.size = *size;
  p.rank = *rank;
  p.local_n = *lsize;
  p.local_rank = *lrank;
  const bool one_machine = *lsize == *size;
  // OpenMPI exports no node index: machines are told apart by their own
  // identity (libnccom's host hash), so the emulated host id is 0 for all.
  p.host = 0;
  p.hosts = 1;
  if (!one_machine) {
    auto nodes = int_var(env, "OMPI_MCA_orte_num_nodes", 1, *size);
    p.hosts = nodes ? *nodes : 2;  // at least two: not every rank is local
  }
  if (Status st = apply_options(o, one_machine, p); !st) return st.take_error();
  const std::string* job = find(env, "OMPI_MCA_ess_base_jobid");
  if (job == nullptr) job = find(env, "PMIX_NAMESPACE");
  if (Status st = pick_root(env, one_machine, job ? "ompi:" + *job : "",
                            "OMPI_MCA_ess_base_jobid / PMIX_NAMESPACE", p);
      !st) {
    return st.take_error();
  }
  return p;
}

Result<Placement> from_slurm(const EnvMap& env, const Options& o) {
  Placement p;
  p.launcher = Launcher::Srun;
  auto size = int_var(env, "SLURM_STEP_NUM_TASKS", 1, 1 << 20);
  if (!size) return size.take_error();
  auto rank = int_var(env, "SLURM_PROCID", 0, *size - 1);
  if (!rank) return rank.take_error();
  auto nodes = int_var(env, "SLURM_STEP_NUM_NODES", 1, *size);
  if (!nodes) return nodes.take_error();
  auto node = int_var(env, "SLURM_NODEID", 0, *nodes - 1);
  if (!node) return node.take_error();
  const std::string* tasks = find(env, "SLURM_STEP_TASKS_PER_NODE");
  if (tasks == nullptr) return env_error("SLURM_STEP_TASKS_PER_NODE is not set");
  const std::vector<int> per_node = expand_slurm_tasks(*tasks);
  if (per_node.size() != static_cast<size_t>(*nodes)) {
    return env_error("SLURM_STEP_TASKS_PER_NODE=" + *tasks + " does not list " +
                     std::to_string(*nodes) + " nodes (SLURM_STEP_NUM_NODES)");
  }
  auto lrank = int_var(env, "SLURM_LOCALID", 0, per_node[*node] - 1);
  if (!lrank) return lrank.take_error();
  p.size = *size;
  p.rank = *rank;
  p.host = *node;
  p.hosts = *nodes;
  p.local_n = per_node[*node];
  p.local_rank = *lrank;
  const bool one_machine = *nodes == 1;
  if (Status st = apply_options(o, one_machine, p); !st) return st.take_error();
  const std::string* job = find(env, "SLURM_JOB_ID");
  const std::string* step = find(env, "SLURM_STEP_ID");
  const std::string key = job ? "slurm:" + *job + "." + (step ? *step : "") : "";
  if (Status st = pick_root(env, one_machine, key, "SLURM_JOB_ID.SLURM_STEP_ID", p); !st)
    return st.take_error();
  return p;
}

Result<Placement> local_parent(const Options& o) {
  if (o.nodes > o.ranks) {
    return env_error("-N " + std::to_string(o.nodes) + " is more than -r " +
                     std::to_string(o.ranks) + ": every emulated host needs at least one rank");
  }
  if (o.ranks > kMaxLocalRanks) {
    return env_error("-r " + std::to_string(o.ranks) + " is more than the " +
                     std::to_string(kMaxLocalRanks) + " ranks a local launch starts");
  }
  const int most = (o.ranks + o.nodes - 1) / o.nodes;  // the first hosts' share
  if (most > kMaxRanksPerHost) {
    return env_error(std::to_string(most) + " ranks per emulated host (-r/-N) is more than the " +
                     std::to_string(kMaxRanksPerHost) + " devices an emulated host has: raise -N");
  }
  if (o.root >= o.ranks) {
    return env_error("--root " + std::to_string(o.root) + " is not a rank of -r " +
                     std::to_string(o.ranks));
  }
  Placement p;
  p.launcher = Launcher::LocalParent;
  p.size = o.ranks;
  p.hosts = o.nodes;
  p.local_n = most;
  return p;
}

}  // namespace

void split_hosts(int size, int hosts, int rank, Placement& p) {
  const int base = size / hosts, extra = size % hosts;
  const int big = extra * (base + 1);  // ranks on the hosts with one more
  if (rank < big) {
    p.host = rank / (base + 1);
    p.local_rank = rank % (base + 1);
    p.local_n = base + 1;
  } else {
    p.host = extra + (rank - big) / base;
    p.local_rank = (rank - big) % base;
    p.local_n = base;
  }
}

const char* launcher_name(Launcher l) {
  switch (l) {
    case Launcher::LocalParent: return "local";
    case Launcher::LocalChild: return "local-rank";
    case Launcher::Mpirun: return "mpirun";
    case Launcher::Srun: return "srun";
  }
  return "?";
}

EnvMap current_env() {
  EnvMap env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string kv = *e;
    const size_t eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return env;
}

Result<Placement> detect_placement(const EnvMap& env, const Options& o) {
  if (find(env, kChildVar) != nullptr) return from_child(env);
  if (find(env, "OMPI_COMM_WORLD_RANK") != nullptr &&
      find(env, "OMPI_COMM_WORLD_SIZE") != nullptr) {
    return from_openmpi(env, o);
  }
  // An sbatch script also has SLURM_PROCID; only an srun step has
  // SLURM_STEP_NUM_TASKS. In a batch script nccom-test launches locally.
  if (find(env, "SLURM_PROCID") != nullptr && find(env, "SLURM_STEP_NUM_TASKS") != nullptr) {
    return from_slurm(env, o);
  }
  return local_parent(o);
}

Placement local_rank_placement(const Options& o, int i, const std::string& root_comm_id) {
  Placement p;
  p.launcher = Launcher::LocalChild;
  p.rank = i;
  p.size = o.ranks;
  p.hosts = o.nodes;
  split_hosts(o.ranks, o.nodes, i, p);
  p.root_comm_id = root_comm_id;
  p.root_source = "the local parent";
  return p;
}

std::string encode_child(const Placement& p) {
  return std::to_string(p.rank) + "," + std::to_string(p.size) + "," + std::to_string(p.host) +
         "," + std::to_string(p.local_rank) + "," + std::to_string(p.local_n) + "," +
         std::to_string(p.hosts);
}

uint16_t derived_port(const std::string& job_key) {
  uint32_t h = 2166136261u;
  for (unsigned char c : job_key) {
    h ^= c;
    h *= 16777619u;
  }
  return static_cast<uint16_t>(20000 + h % 10000);
}

std::vector<int> known_host_counts(const EnvMap& env, const Placement& p) {
  auto split = [&p] {
    std::vector<int> counts(static_cast<size_t>(p.hosts), p.size / p.hosts);
    for (int h = 0; h < p.size % p.hosts; ++h) ++counts[static_cast<size_t>(h)];
    return counts;
  };
  switch (p.launcher) {
    case Launcher::LocalParent: return split();
    case Launcher::LocalChild: return {};
    case Launcher::Mpirun: {
      const std::string* local = find(env, "OMPI_COMM_WORLD_LOCAL_SIZE");
      const std::string* size = find(env, "OMPI_COMM_WORLD_SIZE");
      if (local == nullptr || size == nullptr || *local != *size) return {};
      return split();
    }
    case Launcher::Srun: {
      const std::string* nodes = find(env, "SLURM_STEP_NUM_NODES");
      if (nodes != nullptr && *nodes == "1") return split();
      const std::string* tasks = find(env, "SLURM_STEP_TASKS_PER_NODE");
      return tasks != nullptr ? expand_slurm_tasks(*tasks) : std::vector<int>{};
    }
  }
  return {};
}

std::vector<int> expand_slurm_tasks(const std::string& text) {
  std::vector<int> out;
  std::istringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    char* end = nullptr;
    const long n = std::strtol(item.c_str(), &end, 10);
    if (end == item.c_str() || n < 1 || n > (1 << 20)) return {};
    long repeat = 1;
    if (*end == '(') {
      if (end[1] != 'x') return {};
      char* end2 = nullptr;
      repeat = std::strtol(end + 2, &end2, 10);
      if (end2 == end + 2 || *end2 != ')' || end2[1] != '\0' || repeat < 1 || repeat > (1 << 20))
        return {};
    } else if (*end != '\0') {
      return {};
    }
    if (out.size() + static_cast<size_t>(repeat) > (1u << 20)) return {};
    out.insert(out.end(), static_cast<size_t>(repeat), static_cast<int>(n));
  }
  return out;
}

std::vector<std::string> launch_variables() {
  std::vector<std::string> names = {kDebugStreamVar, kRootCommVar, kHealthAddrVar,
                                    kSocketIfVar,    kFiIfaceVar,  kEmuDevicesVar};
  for (Net net : {Net::Socket, Net::Ofi}) {
    for (const auto& [name, value] : net_env(net)) {
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
  }
  return names;
}

std::vector<std::pair<std::string, std::string>> net_env(Net net) {
  switch (net) {
    case Net::Default: return {};
    case Net::Socket:
      // The host's own socket plugin, even where the runtime loaded libnccom-net.
      return {{"NCCL_NET_PLUGIN", "socket"}, {"NCCOM_NET_USE_RUNTIME_PLUGIN", "false"}};
    case Net::Ofi:
      // The runtime's libnccom-net (net_neuron) over libfabric's tcp;ofi_rxm;
      // an empty NCCL_NET_PLUGIN counts as unset.
      return {{"NCCL_NET_PLUGIN", ""},
              {"NCCOM_NET_USE_RUNTIME_PLUGIN", "true"},
              {"FI_PROVIDER", "tcp;ofi_rxm"}};
  }
  return {};
}

}  // namespace nccom::nccomtest
