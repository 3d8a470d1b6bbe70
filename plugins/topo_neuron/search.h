// The NEW search (the original's topology class, findPathRec): a priority DFS
// that finds Hamiltonian device rings over the platform's device links, then
// expands each device hop into the device's vcores.
//
// Shape (our design where the original's details are unknown;
// docs/decisions/topo-neuron.md, "The NEW search"):
//  * one NeuronNode per device that has at least one available vcore; its
//    edges are the platform links to other such devices, one NeuronEdge per
//    direction (a link is full duplex, so each direction has its own
//    priority);
//  * edges are tried by (locality ascending, priority descending, target
//    ascending) — locality is the original's tie-break;
//  * priority is mutable state: a commit raises it, a backtrack undoes the
//    raise, an accepted ring lowers the priority of every edge it used, so
//    the next ring prefers directed links no earlier ring uses;
//  * a node may leave its MLA only when every node of that MLA is on the
//    path (localsFullyVisited), so MLA blocks are contiguous;
//  * the ring closes only when every node is on the path (isClosingCycle);
//  * every DFS step counts against a budget; running out is an error.
#pragma once

#include "platform.h"

#include <nccom/util/result.h>

#include <bitset>
#include <cstdint>
#include <string>
#include <vector>

namespace nccom::topo_neuron {

inline constexpr int kMaxVcores = 128;
using VcoreSet = std::bitset<kMaxVcores>;
using PathContainer = std::vector<std::vector<int>>;

inline constexpr int kInitialPriority = 8;  // every directed edge starts here
inline constexpr int kMaxPriority = 16;     // topology::maxPriority, the ceiling
inline constexpr int kIntraMlaPenalty = 2;  // priority lost by an edge an accepted ring used
inline constexpr int kInterMlaPenalty = 4;  //   (links between MLAs are the scarcer resource)
inline constexpr uint64_t kDefaultSearchBudget = 1u << 20;  // DFS steps over all rings
inline constexpr int kMaxPathsPerRequest = 32;              // = MAXCHANNELS

// paths_request, the original's search input.
struct PathsRequest {
  VcoreSet availableVcores;
  int trnVersion = 0;  // generation tag: 2 (SUNDA), 3 (CAYMAN), 4 (MARIANA), 0 (EMU)
  int ncPerSengine = 1;
  int senginePerMLA = 1;
  int ncPerVcore = 1;
  int max = 1;  // number of distinct rings wanted
  uint64_t budget = kDefaultSearchBudget;
};

// A request for `available` on `d`, geometry filled from the description.
PathsRequest makeRequest(const PlatformDescription& d, const VcoreSet& available, int max);

// All vcores of the first `nDevices` devices.
VcoreSet firstDevices(const PlatformDescription& d, int nDevices);

// systemDeviceBitset's job for callers holding a list of vcore ids (the
// NeuronCores of the node's ranks): errors on ids outside [0, 128) and on
// repeated ids (two ranks on one vcore).
Result<VcoreSet> vcoresFromIds(const std::vector<int>& ids);

struct NeuronEdge {
  int source = 0;
  int target = 0;
  EdgeLocality locality = EdgeLocality::Local;
  int priority = kInitialPriority;
  bool intraMla = false;

  bool isIntraMLA() const { return intraMla; }
  // Commit: +1 when the edge is at or above `floor` and below `ceiling`.
  // Returns whether it was raised, so the backtrack undoes exactly that.
  bool tryIncreasePriority(int floor, int ceiling);
  // Backtrack undo of a raise.
  void undoIncrease() { --priority; }
  // Penalty after an accepted ring used this edge (never below 0).
  void decreasePriority();
};

struct NeuronNode {
  int device = 0;
  int mla = 0;
  std::vector<int> vcores;        // available vcores of the device, ascending
  std::vector<NeuronEdge> edges;  // to other nodes (indices into the node list)
  std::vector<int> mlaPeers;      // other nodes of the same MLA

  // True when every node of this node's MLA is on the path.
  bool localsFullyVisited(const VcoreSet& visitedNodes) const;
};

// One node per device with an available vcore; edges from the platform links.
Result<std::vector<NeuronNode>> constructNodes(const PlatformDescription& d,
                                               const VcoreSet& available);

struct SearchStats {
  uint64_t steps = 0;
  bool budgetExhausted = false;
};

class Topology {
 public:
  Topology(std::vector<NeuronNode> nodes, uint64_t budget);

  // Up to `max` distinct device rings (node indices) starting at `start`.
  // An error when no ring exists, or when the budget ran out before one
  // was found; fewer than `max` rings when no more exist or the budget ran
  // out after at least one.
  Result<PathContainer> findPaths(int start, int max);

  const std::vector<NeuronNode>& nodes() const { return nodes_; }
  const SearchStats& stats() const { return stats_; }

 private:
  struct Dfs;
  bool findPathRec(Dfs& s, int node, int depth);
  bool isClosingCycle(const Dfs& s, int node, int depth) const;
  std::vector<NeuronEdge*> orderedEdges(int node);
  std::string deviceList() const;

  std::vector<NeuronNode> nodes_;
  uint64_t budget_;
  SearchStats stats_;
  int maxPriority_ = kMaxPriority;
  PathContainer found_;
};

struct SearchResult {
  std::vector<int> devices;   // the devices searched, ascending
  PathContainer devicePaths;  // device ids, each a ring (closing hop implied)
  PathContainer corePaths;    // global vcore ids, same rings expanded
  SearchStats stats;
};

// topology::getPaths: validate, construct nodes, search, expand to cores.
Result<SearchResult> getPaths(const PlatformDescription& d, const PathsRequest& req);

// The order in which a device's available vcores follow each other in a
// core path: SEngines in reflected-Gray-code order (each step toggles one
// bit: bit 0 = same-die RMTV hop, bit 1 = cross-die D2D hop), cores of one
// SEngine ascending.
std::vector<int> deviceCoreOrder(const PlatformDescription& d, int device,
                                 const VcoreSet& available);

PathContainer getSingleVCorePerDevicePath(const PlatformDescription& d,
                                          const PathContainer& devicePaths,
                                          const VcoreSet& available);
PathContainer convertDevicePathToCorePath(const PlatformDescription& d,
                                          const PathContainer& devicePaths,
                                          const VcoreSet& available);

std::string formatList(const std::vector<int>& v);  // "{0, 1, 2}"

}  // namespace nccom::topo_neuron
