#pragma once

// One collective predicted over a size sweep, as `commscale bench` would time it on a cluster of the
// catalog: `commscale predict --collective`. The group is ranks 0 .. ranks-1 of the cluster (mpirun's
// default placement: node by node), alone on its links; every row is the collective model's time
// (comm_model.hpp) for the size bench would run (the nccl-tests size after rounding gathers, scatters
// and all-to-all down to 16-byte chunks), with algbw and busbw as bench computes them. Measured sweeps
// of the same sizes are compared with these rows by launch/collective_latency.py.

#include <string>
#include <vector>

#include "core/collective.hpp"
#include "core/dtype.hpp"
#include "core/units.hpp"
#include "predict/comm_model.hpp"
#include "predict/group_links.hpp"
#include "predict/target.hpp"

namespace commscale::predict {

struct CollectiveSweepRequest {
  std::vector<Collective> collectives;
  std::vector<Bytes> sizes;  // requested, as bench's -b/-e/-f give them
  DataType dtype = DataType::kFloat32;
  int ranks = 0;  // 0: every GPU of the target
};

struct PredictedCollectiveRow {
  Collective collective = Collective::kAllReduce;
  Bytes size;  // bench's "size" column for the requested size
  CommEstimate estimate;
  GBps algbw;
  GBps busbw;
};

struct CollectiveSweepPrediction {
  int ranks = 0;
  int nodes = 0;
  GroupLinks group;       // the group's ring as the link graph sees it
  FlowLinks all_to_all;   // its slowest all-to-all flow
  std::vector<PredictedCollectiveRow> rows;  // by collective, then size; sizes bench skips (0) are left out
};

// Throws InputError("--ranks") when the request asks for more ranks than the target has.
[[nodiscard]] CollectiveSweepPrediction predict_collective_sweep(const Target& target,
                                                                 const CollectiveSweepRequest& request);

}  // namespace commscale::predict
