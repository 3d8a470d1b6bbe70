// Where this process runs as a rank: started by nccom-test itself (local
// launch), by mpirun (OpenMPI's OMPI_COMM_WORLD_*) or by srun (Slurm's
// SLURM_*), worked out from an environment map so tests can give one.
#pragma once

#include "options.h"

#include <nccom/util/result.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace nccom::nccomtest {

using EnvMap = std::map<std::string, std::string>;

enum class Launcher {
  LocalParent,  // no launcher: this process starts the ranks
  LocalChild,   // a rank started by a local parent (NCCOM_TEST_CHILD)
  Mpirun,
  Srun,
};
const char* launcher_name(Launcher l);  // "local", "local-rank", "mpirun", "srun"

struct Placement {
  Launcher launcher = Launcher::LocalParent;
  int rank = 0;
  int size = 1;
  int host = 0;              // emulated host id (virtual_server_id)
  int hosts = 1;             // emulated hosts (or machines) in the job
  int local_rank = 0;        // device index on that host
  int local_n = 1;           // ranks on that host
  std::string root_comm_id;  // "ip:port" of rank 0's bootstrap root ("" for LocalParent)
  std::string root_source;   // where root_comm_id came from, for messages
};

// The variable a local parent hands each rank: "rank,size,host,local_rank,local_n,hosts".
inline constexpr const char* kChildVar = "NCCOM_TEST_CHILD";
// Set to 1 by a local parent whose stderr is a terminal (rank 0's progress line).
inline constexpr const char* kTtyVar = "NCCOM_TEST_STDERR_TTY";

// The variables nccom-test sets for its ranks (each where it is set).
inline constexpr const char* kRootCommVar = "NEURON_RT_ROOT_COMM_ID";   // local launch
inline constexpr const char* kEmuDevicesVar = "NEURON_RT_EMU_DEVICES";  // local launch
inline constexpr const char* kSocketIfVar = "CCOM_SOCKET_IFNAME";       // local launch, unless set
inline constexpr const char* kFiIfaceVar = "FI_TCP_IFACE";              // local launch, unless set
inline constexpr const char* kHealthAddrVar = "NCCOM_RAS_ADDR";         // local launch, unless set
inline constexpr const char* kDebugStreamVar = "NCCOM_DEBUG_STREAM";    // always: logs to stderr

// Every variable nccom-test sets or may set for its ranks: the ones above
// and --net's (net_env), for the report of what a rank's configuration read.
std::vector<std::string> launch_variables();

// The process environment as a map.
EnvMap current_env();

// Where rank `rank` of `size` sits when `hosts` emulated hosts share them:
// in blocks, the first size % hosts hosts one rank more (8 on 3: 3, 3, 2).
// Sets host, local_rank and local_n.
void split_hosts(int size, int hosts, int rank, Placement& p);

// Decides the launcher and this process's place. Precedence: NCCOM_TEST_CHILD,
// then OpenMPI (OMPI_COMM_WORLD_RANK and _SIZE), then Slurm (an srun step:
// SLURM_PROCID and SLURM_STEP_NUM_TASKS), else a local parent. Checks -r/-N/
// --root against the launcher. An error names the variable or option and the rule.
Result<Placement> detect_placement(const EnvMap& env, const Options& o);

// Rank i of a local launch of o.ranks ranks on o.nodes emulated hosts.
Placement local_rank_placement(const Options& o, int i, const std::string& root_comm_id);
// NCCOM_TEST_CHILD's value for p.
std::string encode_child(const Placement& p);

// The loopback root port of a single-machine launcher job without
// NEURON_RT_ROOT_COMM_ID: 20000 + FNV-1a(job key) mod 10000 (below Linux's
// ephemeral range 32768-60999, so no outgoing connection holds it).
uint16_t derived_port(const std::string& job_key);

// The rank count of every emulated host of the job, when this process can
// know them all: a local launch or a launcher on one machine (the ranks
// split over -N as split_hosts does), srun across nodes
// (SLURM_STEP_TASKS_PER_NODE). Empty otherwise: mpirun across machines
// (OpenMPI tells a rank its own machine's count only), a rank a local
// launch started (its launcher asked).
std::vector<int> known_host_counts(const EnvMap& env, const Placement& p);

// Slurm's compressed per-node task counts ("2(x3),1" = 2,2,2,1); empty on error.
std::vector<int> expand_slurm_tasks(const std::string& text);

// The variables --net sets before the runtime starts (name, value).
std::vector<std::pair<std::string, std::string>> net_env(Net net);

}  // namespace nccom::nccomtest
