//===- JsonEmitter.cpp - the schedule as JSON for runtimes and tools ------===//
//
// Streams the schedule (no DOM: a million actions stay cheap): schema
// version, verification, topology, routes and weight-sharing groups, cost
// model, options, synthesis request and every rank's actions with kind,
// microbatch, stage, peer, idle time and overlap flag. The field list is
// docs/export.schema.json; keep the two in step.
//
//===----------------------------------------------------------------------===//
#include "pps/backends/JsonEmitter.h"

#include "pps/analysis/Routes.h"

#include "llvm/Support/JSON.h"

namespace pps::backends {

static void stageCost(llvm::json::OStream &J, const ir::StageCost &C) {
  J.object([&] {
    J.attribute("F", C.F);
    J.attribute("I", C.I);
    J.attribute("W", C.W);
    J.attribute("B", C.B);
  });
}

static void intArray(llvm::json::OStream &J, llvm::StringRef Name,
                     llvm::ArrayRef<int32_t> Values) {
  J.attributeArray(Name, [&] {
    for (int32_t V : Values)
      J.value(V);
  });
}

/// {"scope": "rank", "eager_threshold_bytes": 65536} (null: none).
static void commStream(llvm::json::OStream &J, const ir::CommStream &St) {
  J.object([&] {
    J.attribute("scope", ir::streamScopeName(St.Scope));
    if (St.EagerThreshold >= 0)
      J.attribute("eager_threshold_bytes", St.EagerThreshold);
    else
      J.attribute("eager_threshold_bytes", nullptr);
  });
}

void emitJson(const ir::Schedule &S, llvm::raw_ostream &OS,
              const ExportStatus &Status) {
  analysis::ModelLayout Layout = analysis::modelLayout(S.Topo);
  llvm::json::OStream J(OS, 1);
  J.object([&] {
    J.attribute("schema_version", ExportSchemaVersion);
    J.attribute("name", S.Name);
    J.attributeObject("verification", [&] {
      J.attribute("verified", Status.Verified);
      J.attribute("comm_model", ir::commModelName(Status.Model));
      J.attributeBegin("comm_stream");
      commStream(J, Status.Stream);
      J.attributeEnd();
      if (!Status.Verified)
        J.attribute("reason", Status.Why);
    });
    J.attributeObject("topology", [&] {
      J.attribute("ranks", S.Topo.Ranks);
      J.attribute("stages", S.Topo.Stages);
      J.attribute("microbatches", S.Topo.Microbatches);
      J.attribute("placement", ir::placementName(S.Topo.Place));
      J.attribute("directions", S.Topo.Directions);
      intArray(J, "stage_to_rank", S.Topo.StageToRank);
    });
    J.attributeArray("routes", [&] {
      for (const analysis::Route &R : Layout.Routes)
        J.object([&] {
          J.attribute("first_microbatch", R.FirstMicrobatch);
          J.attribute("microbatches", R.Microbatches);
          J.attribute("first_stage", R.FirstStage);
          J.attribute("last_stage", R.LastStage);
          J.attribute("data_rank", R.DataRank);
          J.attribute("loss_rank", R.LossRank);
        });
    });
    intArray(J, "data_ranks", Layout.DataRanks);
    intArray(J, "loss_ranks", Layout.LossRanks);
    J.attributeArray("weight_groups", [&] {
      for (const auto &G : Layout.Groups)
        J.array([&] {
          for (int32_t St : G)
            J.value(St);
        });
    });
    J.attributeObject("cost", [&] {
      J.attributeBegin("default");
      stageCost(J, S.Cost.Default);
      J.attributeEnd();
      J.attributeArray("per_stage", [&] {
        for (const ir::StageCost &C : S.Cost.PerStage)
          stageCost(J, C);
      });
      if (S.Cost.Overlap)
        J.attribute("overlap", *S.Cost.Overlap);
      else
        J.attribute("overlap", nullptr);
      // Per stage: the time of overlap pairs whose first compute is there
      // (null: `overlap`, or the sum); empty when no stage has one.
      J.attributeArray("stage_overlap", [&] {
        for (const std::optional<double> &T : S.Cost.StageOverlap)
          if (T)
            J.value(*T);
          else
            J.value(nullptr);
      });
      J.attribute("latency", S.Cost.Latency);
      J.attribute("bandwidth_bytes_per_ms", S.Cost.BandwidthBytesPerMs);
      J.attribute("activation_bytes", S.Cost.ActivationBytes);
      J.attribute("gradient_bytes", S.Cost.GradientBytes);
      J.attribute("async_comm", S.Cost.AsyncComm);
    });
    J.attribute("comm_model", ir::commModelName(S.Comm));
    J.attributeBegin("comm_stream");
    commStream(J, S.Stream);
    J.attributeEnd();
    if (S.MemoryLimit)
      J.attribute("memory_limit", *S.MemoryLimit);
    else
      J.attribute("memory_limit", nullptr);
    // What F allocates and I and W free per (microbatch, stage), in the
    // limit's units (the last backward frees the rest); per stage when the
    // stages differ (then the block's amounts are the chunk model, unused).
    auto Amounts = [&](const schema::MemoryModel &M) {
      J.attribute("F", M.Forward);
      J.attribute("I", M.inputAmount());
      J.attribute("W", M.weightAmount());
    };
    J.attributeObject("memory_model", [&] {
      Amounts(S.Memory.Default);
      if (S.Memory.Bytes)
        J.attribute("unit", "bytes");
      if (!S.Memory.Stages.empty())
        J.attributeArray("stages", [&] {
          for (const schema::MemoryModel &M : S.Memory.Stages)
            J.object([&] { Amounts(M); });
        });
    });
    J.attributeObject("fsdp", [&] {
      J.attribute("enabled", S.Fsdp.Enabled);
      J.attribute("prefetch", S.Fsdp.Prefetch);
    });
    if (S.Synth) {
      J.attributeObject("synth", [&] {
        J.attribute("memory", S.Synth->MemoryLimit);
        for (auto &[Name, Value] : S.Synth->Args)
          J.attribute(Name, Value);
      });
    }
    J.attributeArray("ranks", [&] {
      for (size_t R = 0; R < S.Ranks.size(); ++R) {
        J.object([&] {
          J.attribute("rank", int64_t(R));
          J.attributeArray("actions", [&] {
            for (const ir::Action &A : exportActions(S.Ranks[R].Actions)) {
              J.object([&] {
                J.attribute("kind", ir::actionKindName(A.Kind));
                if (A.Kind == ir::ActionKind::Idle) {
                  J.attribute("time", double(A.idleTime()));
                  return;
                }
                if (A.Microbatch >= 0)
                  J.attribute("microbatch", A.Microbatch);
                J.attribute("stage", A.Stage);
                if (ir::isComm(A.Kind))
                  J.attribute("peer", A.Peer);
                if (A.overlapsNext())
                  J.attribute("overlap_next", true);
              });
            }
          });
        });
      }
    });
  });
  OS << "\n";
}

} // namespace pps::backends
