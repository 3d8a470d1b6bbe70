#include "transport/connectivity.h"

#include <algorithm>
#include <string>

namespace nccom::transport {

const char* connectivity_name(uint32_t conn) {
  switch (conn) {
    case ENC_CONNECTIVITY_MESH: return "MESH";
    case ENC_CONNECTIVITY_RDH: return "RDH";
    case ENC_CONNECTIVITY_DEFAULT: return "DEFAULT";
  }
  return "?";
}

Result<std::vector<int>> connectivity_peers(uint32_t conn, int rank, int n) {
  if (n < 1 || rank < 0 || rank >= n) {
    return make_error(NRT_INVALID, "connectivity peers: rank " + std::to_string(rank) +
                                       " is not in 0.." + std::to_string(n - 1));
  }
  std::vector<int> peers;
  switch (conn) {
    case ENC_CONNECTIVITY_DEFAULT: return peers;
    case ENC_CONNECTIVITY_MESH:
      for (int r = 0; r < n; ++r) {
        if (r != rank) peers.push_back(r);
      }
      return peers;
    case ENC_CONNECTIVITY_RDH: {
      int p2 = 1;
      while (p2 * 2 <= n) p2 *= 2;
      if (rank >= p2) {
        peers.push_back(rank - p2);  // folds into its partner before the exchange
        return peers;
      }
      for (int bit = 1; bit < p2; bit *= 2) peers.push_back(rank ^ bit);
      if (rank + p2 < n) peers.push_back(rank + p2);
      std::sort(peers.begin(), peers.end());
      return peers;
    }
  }
  return make_error(NRT_INVALID, "connectivity " + std::to_string(static_cast<int>(conn)) +
                                     " is none of ENC_CONNECTIVITY_MESH (0), RDH (1), DEFAULT (2)");
}

}  // namespace nccom::transport
