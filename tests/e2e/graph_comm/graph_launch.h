// Runs one communicator of `hosts` x `per_host` ranks as graph_rank_driver
// processes (rank r on emulated host r / per_host, device r % per_host) and
// returns every rank's key=value report; a rank that exits non-zero fails
// the calling test.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace graph_comm_test {

using Report = std::map<std::string, std::string>;

struct Launch {
  int hosts = 1;
  int per_host = 1;
  std::map<std::string, std::string> env;  // added to the common environment
  // Extra arguments of rank r (e.g. {"--expand", "mesh"}).
  std::function<std::vector<std::string>(int rank)> args;
};

std::vector<Report> run_ranks(const Launch& launch);

}  // namespace graph_comm_test
