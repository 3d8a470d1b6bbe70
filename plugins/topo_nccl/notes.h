// Notes: what detection skipped or assumed, kept in the description and
// logged once at INFO when recorded (the function that classifies a problem
// reports it; callers only pass the Notes along).
#pragma once

#include <string>
#include <vector>

namespace nccom::topo_nccl {

class Notes {
 public:
  void add(std::string line);
  const std::vector<std::string>& lines() const { return lines_; }
  std::vector<std::string> take() { return std::move(lines_); }

 private:
  std::vector<std::string> lines_;
};

}  // namespace nccom::topo_nccl
