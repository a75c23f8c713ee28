//===- Options.cpp - options shared by every ppsc subcommand --------------===//
#include "pps/driver/Command.h"
#include "pps/frontend/Limits.h"

using namespace llvm;

namespace pps::driver::opts {

cl::OptionCategory Category("ppsc options");

static cl::SubCommand &all() { return *cl::AllSubCommands; }

cl::opt<std::string> Input(cl::Positional, cl::desc("<input .pps|.csv|->"),
                           cl::sub(all()), cl::cat(Category));
cl::opt<std::string> Output("o",
                            cl::desc("Write output to <file> (default stdout)"),
                            cl::value_desc("file"), cl::init("-"),
                            cl::sub(all()), cl::cat(Category));
cl::opt<std::string>
    DiagnosticsFormat("diagnostics-format",
                      cl::desc("Diagnostics as text (default) or json"),
                      cl::value_desc("text|json"), cl::init("text"),
                      cl::sub(all()), cl::cat(Category));
cl::opt<std::string>
    PipelineName("pipeline",
                 cl::desc("Compile the pipeline of this name (if several)"),
                 cl::value_desc("name"), cl::sub(all()), cl::cat(Category));
cl::list<std::string>
    ImportPaths("I",
                cl::desc("Search <dir> for imports and schedule names "
                         "(before the stdlib)"),
                cl::value_desc("dir"), cl::Prefix, cl::sub(all()),
                cl::cat(Category));
cl::opt<int> Ranks("ranks", cl::desc("Override the pipeline's ranks"),
                   cl::value_desc("P"), cl::init(0), cl::sub(all()),
                   cl::cat(Category));
cl::opt<int> Microbatches("microbatches",
                          cl::desc("Override the pipeline's microbatches"),
                          cl::value_desc("M"), cl::init(0), cl::sub(all()),
                          cl::cat(Category));
cl::opt<int> Stages("stages", cl::desc("Override the pipeline's stages"),
                    cl::value_desc("S"), cl::init(0), cl::sub(all()),
                    cl::cat(Category));
cl::list<std::string>
    Defines("D",
            cl::desc("Set a pipeline field or schedule argument: -Dname=int"),
            cl::value_desc("name=value"), cl::Prefix, cl::sub(all()),
            cl::cat(Category));
cl::opt<std::string>
    CostsFile("costs",
              cl::desc("Take the schedule's costs from FILE, a .pps file such "
                       "as the profile an executor writes (--profile): its "
                       "cost and comm blocks replace the schedule's before "
                       "any pass reads them"),
              cl::value_desc("FILE"), cl::sub(all()), cl::cat(Category));
cl::opt<uint64_t> StepBudget("step-budget",
                             cl::desc("Evaluation step budget (default 1G)"),
                             cl::init(frontend::DefaultStepBudget),
                             cl::sub(all()), cl::cat(Category));
cl::opt<unsigned> ErrorLimit("error-limit",
                             cl::desc("Stop printing after N errors (0 = all)"),
                             cl::init(50), cl::sub(all()), cl::cat(Category));
// One prefix option for clang's warning flags: -Werror, -Werror=KIND,
// -Wno-error=KIND, -Wno-KIND (Session::warningOptions reads them in order).
cl::list<std::string>
    WarningFlags("W",
                 cl::desc("Warnings: -Werror (all are errors), -Werror=KIND, "
                          "-Wno-error=KIND (stays a warning), -Wno-KIND "
                          "(silenced); KIND as in [brackets]"),
                 cl::value_desc("error|error=KIND|no-error=KIND|no-KIND"),
                 cl::Prefix, cl::sub(all()), cl::cat(Category));
cl::opt<uint64_t>
    MaxActions("max-actions",
               cl::desc("Most actions the schedule may have, sends and "
                        "receives included (default 16777216)"),
               cl::value_desc("N"), cl::init(ir::DefaultMaxActions),
               cl::sub(all()), cl::cat(Category));
cl::opt<std::string> MaxInputSize(
    "max-input-size",
    cl::desc("Largest input file read, in bytes (suffix K, M or G; default "
             "16M)"),
    cl::value_desc("bytes"), cl::init("16M"), cl::sub(all()),
    cl::cat(Category));
cl::opt<std::string>
    ImportRoot("import-root",
               cl::desc("Refuse imports that resolve outside <dir> (the -I "
                        "directories and the stdlib stay reachable)"),
               cl::value_desc("dir"), cl::sub(all()), cl::cat(Category));
// LLVM itself registers --color, so ours has a longer name.
cl::opt<std::string> Color("diagnostics-color",
                           cl::desc("Colour diagnostics: auto, always, never"),
                           cl::value_desc("when"), cl::init("auto"),
                           cl::sub(all()), cl::cat(Category));

} // namespace pps::driver::opts
