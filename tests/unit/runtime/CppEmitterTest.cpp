//===- CppEmitterTest.cpp - the C++ executor backend ----------------------===//
#include "RuntimeTestUtil.h"

#include "pps/backends/CppEmitter.h"
#include "pps/ir/Builder.h"

#include <regex>
#include <sstream>

using namespace pps;

namespace {

TEST(CppEmitter, StringsAndCommentsCannotInjectCode) {
  EXPECT_EQ(backends::cppStringLiteral("a\"b\\c\n?d"),
            "a\\\"b\\\\c\\012\\077d");
  EXPECT_EQ(backends::cppCommentText("x\ny\\"), "x?y?");
  EXPECT_EQ(backends::cppCommentText("\"; } int evil;"), "\"; } int evil;");
}

TEST(CppEmitter, EmitsCompactTablesThatDecodeToTheSchedule) {
  auto T = rttest::compile(
      "pipeline demo { ranks 2; microbatches 3; schedule one_f_one_b(); }");
  ASSERT_TRUE(T);
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  backends::emitCpp(T->Sched, {"demo.pps", true}, OS);
  OS.flush();
  EXPECT_NE(Out.find("#include \"ppsrt/Main.h\""), std::string::npos);
  EXPECT_NE(Out.find("const int32_t kStageToRank[2] = {0, 1};"),
            std::string::npos);
  EXPECT_NE(Out.find("const int64_t kPredictedPeak[2] = {2, 1};"),
            std::string::npos);
  EXPECT_NE(Out.find("return ppsrt::executorMain(kSchedule, argc, argv);"),
            std::string::npos);
  // Read rank 0's table back and compare it with the rows of the IR.
  size_t Begin = Out.find("const int32_t kRank0[] = {");
  ASSERT_NE(Begin, std::string::npos);
  size_t End = Out.find("};", Begin);
  std::string Body = Out.substr(Begin, End - Begin);
  std::vector<int32_t> Ints;
  std::istringstream Lines(Body);
  std::string Line;
  std::getline(Lines, Line); // the declaration
  while (std::getline(Lines, Line)) {
    Line = Line.substr(0, Line.find("//"));
    std::regex Num("-?[0-9]+");
    for (auto It = std::sregex_iterator(Line.begin(), Line.end(), Num);
         It != std::sregex_iterator(); ++It)
      Ints.push_back(std::stoi(It->str()));
  }
  EXPECT_EQ(Ints, T->Rows[0]);
  // The comments give the text form.
  EXPECT_NE(Body.find("// F0@0 | send F0@0 -> 1 | F1@0"), std::string::npos)
      << Body;
}

TEST(CppEmitter, NamesFromTheSourceOnlyAppearEscaped) {
  ir::ScheduleBuilder B(1, 1, 1);
  B.name("x\"); system(\"rm -rf /\"); //\n#include <evil>\\");
  B.rank(0).F(0).B(0);
  ir::Schedule S = B.build();
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  backends::emitCpp(S, {"a\nb.pps", false}, OS);
  OS.flush();
  // The text only ever appears inside a comment or an escaped literal:
  // no line of code starts with it.
  std::istringstream Lines(Out);
  std::string Line;
  while (std::getline(Lines, Line))
    EXPECT_NE(Line.rfind("#include <evil>", 0), 0u) << Line;
  EXPECT_NE(Out.find("\"x\\\"); system(\\\"rm -rf /\\\"); //\\012#include "
                     "<evil>\\\\\", // name"),
            std::string::npos)
      << Out;
  EXPECT_NE(Out.find("// Pipeline: x\"); system(\"rm -rf /\"); //?#include "
                     "<evil>?\n"),
            std::string::npos);
  EXPECT_NE(Out.find("\"a\\012b.pps\", // source"), std::string::npos);
}

TEST(CppEmitter, OutputIsDeterministic) {
  auto T = rttest::compile("pipeline p { ranks 4; stages 8 placement v; "
                           "microbatches 8; schedule dualpipe_v(); }");
  ASSERT_TRUE(T);
  std::string A, B;
  llvm::raw_string_ostream OA(A), OB(B);
  backends::emitCpp(T->Sched, {"p.pps", true}, OA);
  backends::emitCpp(T->Sched, {"p.pps", true}, OB);
  EXPECT_EQ(OA.str(), OB.str());
}

} // namespace
