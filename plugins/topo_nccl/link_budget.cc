#include "link_budget.h"

#include <algorithm>
#include <cmath>

namespace nccom::topo_nccl {

using topo::LinkType;
using topo::NodeRef;
using topo::NodeType;

LinkBudget::LinkBudget(const topo::TopoSystem& system)
    : sys_(system), nGpus_(system.count(NodeType::GPU)), nNets_(system.count(NodeType::NET)) {
  slotBase_.resize(topo::kNodeTypeCount);
  for (int t = 0; t < topo::kNodeTypeCount; ++t) {
    for (const auto& node : sys_.of(static_cast<NodeType>(t))) {
      slotBase_[static_cast<std::size_t>(t)].push_back(static_cast<int>(full_.size()));
      for (const auto& link : node.links) full_.push_back(milli(link.width));
    }
  }
  width_ = full_;
  for (int g = 0; g < nGpus_; ++g) {
    const NodeRef ref{NodeType::GPU, g};
    std::pair<int, int> pci{-1, -1};
    const auto& links = sys_.at(ref).links;
    for (std::size_t l = 0; l < links.size() && pci.first < 0; ++l) {
      if (links[l].type != LinkType::PCI) continue;
      const int back = slotOf(links[l].remote, ref);
      if (back >= 0) pci = {slotBase_[0][static_cast<std::size_t>(g)] + static_cast<int>(l), back};
    }
    gpuPci_.push_back(pci);
  }
  plans_.resize(static_cast<std::size_t>(nGpus_ * nGpus_ + 2 * nGpus_ * nNets_));
  for (int g = 0; g < nGpus_; ++g) {
    const NodeRef gpu{NodeType::GPU, g};
    for (int h = 0; h < nGpus_; ++h) {
      plans_[static_cast<std::size_t>(planIndex(gpu, {NodeType::GPU, h}))] =
          compile(gpu, {NodeType::GPU, h});
    }
    for (int n = 0; n < nNets_; ++n) {
      const NodeRef net{NodeType::NET, n};
      plans_[static_cast<std::size_t>(planIndex(gpu, net))] = compile(gpu, net);
      plans_[static_cast<std::size_t>(planIndex(net, gpu))] = compile(net, gpu);
    }
  }
}

int64_t LinkBudget::milli(float gbps) { return std::llround(static_cast<double>(gbps) * 1000.0); }

void LinkBudget::reset() { width_ = full_; }

int LinkBudget::slotOf(NodeRef from, NodeRef to) const {
  const auto& links = sys_.at(from).links;
  for (std::size_t l = 0; l < links.size(); ++l) {
    if (links[l].remote == to) {
      return slotBase_[static_cast<std::size_t>(from.type)][static_cast<std::size_t>(from.index)] +
             static_cast<int>(l);
    }
  }
  return -1;
}

int LinkBudget::planIndex(NodeRef from, NodeRef to) const {
  if (from.type == NodeType::GPU && to.type == NodeType::GPU) return from.index * nGpus_ + to.index;
  const int base = nGpus_ * nGpus_;
  if (from.type == NodeType::GPU && to.type == NodeType::NET)
    return base + from.index * nNets_ + to.index;
  if (from.type == NodeType::NET && to.type == NodeType::GPU) {
    return base + nGpus_ * nNets_ + from.index * nGpus_ + to.index;
  }
  return -1;
}

LinkBudget::Plan LinkBudget::compile(NodeRef from, NodeRef to) {
  Plan plan;
  const auto& path =
      sys_.at(from).paths[static_cast<std::size_t>(to.type)][static_cast<std::size_t>(to.index)];
  if (!path.reachable() || path.count() == 0) return plan;
  plan.first = static_cast<int>(hops_.size());
  plan.count = path.count();
  NodeRef node = from;
  for (const NodeRef next : path.hops) {
    Hop hop;
    hop.slot = slotOf(node, next);
    if (hop.slot < 0) {  // a path over a link that is gone: unusable
      hops_.resize(static_cast<std::size_t>(plan.first));
      return Plan{};
    }
    const auto& links = sys_.at(node).links;
    const LinkType type =
        links[static_cast<std::size_t>(hop.slot - slotBase_[static_cast<std::size_t>(node.type)]
                                                           [static_cast<std::size_t>(node.index)])]
            .type;
    hop.pci = type == LinkType::PCI;
    if (next.type == NodeType::GPU && sys_.at(next).gpu.sm < 80 && from.type != NodeType::GPU)
      hop.revDiv = 8;
    if (next.type == NodeType::CPU && type == LinkType::NVL) hop.revDiv = 1;
    if (hop.revDiv != 0) {
      hop.revSlot = slotOf(next, node);
      if (hop.revSlot < 0) {
        hops_.resize(static_cast<std::size_t>(plan.first));
        return Plan{};
      }
    }
    if (next.type == NodeType::CPU && path.type == topo::PathType::PHB &&
        from.type == NodeType::GPU) {
      const auto& cpu = sys_.at(next).cpu;
      if (cpu.arch == topo::CpuArch::X86 && cpu.vendor == topo::CpuVendor::Intel)
        plan.intelPci = true;
    }
    hops_.push_back(hop);
    node = next;
  }
  plan.usable = true;
  return plan;
}

int LinkBudget::move(const Plan& plan, int steps, int64_t speed) {
  const int64_t pciSpeed = plan.intelPci ? speed * 6 / 5 : speed;
  for (int k = 0; k < steps; ++k) {
    const Hop& hop = hops_[static_cast<std::size_t>(plan.first + k)];
    const int64_t fw = hop.pci ? pciSpeed : speed;
    const int64_t rev = hop.revDiv != 0 ? fw / hop.revDiv : 0;
    int64_t& w = width_[static_cast<std::size_t>(hop.slot)];
    if (w < fw || (rev != 0 && width_[static_cast<std::size_t>(hop.revSlot)] < rev)) return k;
    w -= fw;
    if (rev != 0) width_[static_cast<std::size_t>(hop.revSlot)] -= rev;
  }
  return steps;
}

bool LinkBudget::reserve(NodeRef from, NodeRef to, int64_t speed) {
  const int idx = planIndex(from, to);
  if (idx < 0) return false;
  const Plan& plan = plans_[static_cast<std::size_t>(idx)];
  if (!plan.usable) return false;
  const int done = move(plan, plan.count, speed);
  if (done == plan.count) return true;
  move(plan, done, -speed);
  return false;
}

void LinkBudget::release(NodeRef from, NodeRef to, int64_t speed) {
  const int idx = planIndex(from, to);
  if (idx < 0) return;
  const Plan& plan = plans_[static_cast<std::size_t>(idx)];
  if (plan.usable) move(plan, plan.count, -speed);
}

int64_t LinkBudget::gpuPciWidth(int gpu) const {
  const auto [fwd, back] = gpuPci_[static_cast<std::size_t>(gpu)];
  if (fwd < 0) return -1;
  return std::min(width_[static_cast<std::size_t>(fwd)], width_[static_cast<std::size_t>(back)]);
}

}  // namespace nccom::topo_nccl
