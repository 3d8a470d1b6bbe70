// Postset, kangaRing, MLA cycles and their log lines, in order.
#include "rings/stage.h"

#include "log/log.h"

namespace nccom::rings {

Result<GraphSummary> runPostsetStage(const StageInput& in) {
  auto rings = postset(in.postset);
  if (!rings.ok()) return rings.take_error();

  GraphSummary s;
  s.rank = in.postset.myRank;
  s.nRanks = in.postset.nRanks;
  s.rings = std::move(*rings);

  if (in.switchV1) {
    auto kanga =
        materialiseKangaRing(in.postset.fragments, in.nodeRanks, in.nKangaPaths, in.localKanga);
    if (!kanga.ok()) return kanga.take_error();
    s.kangaRing = std::move(*kanga);
  }

  auto mla = buildMlaCycles(s.rings, s.rank, in.rankMla, in.rankNode);
  if (!mla.ok()) return mla.take_error();
  s.mla = std::move(*mla);
  if (Status st = checkMlaContiguity(s.mla); !st) {
    if (in.strictMla) return st.take_error();
    NCCOM_WARN("%s", st.error().message.c_str());
  }

  logGraphSummary(s);
  return s;
}

}  // namespace nccom::rings
