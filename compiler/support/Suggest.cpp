//===- Suggest.cpp - "did you mean" for a misspelt name -------------------===//
#include "pps/support/Suggest.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <vector>

namespace pps {

namespace {

/// Lower case, no separators, number words as digits.
std::string normalise(llvm::StringRef S) {
  std::string Out;
  for (char C : S)
    if (C != '_' && C != '-' && C != ' ')
      Out += llvm::toLower(C);
  for (auto [Word, Digit] : {std::pair{"one", "1"}, std::pair{"two", "2"}}) {
    size_t At;
    while ((At = Out.find(Word)) != std::string::npos)
      Out.replace(At, 3, Digit);
  }
  return Out;
}

/// Edit distance counting a swap of two neighbours as one edit (`lnit` is
/// one edit from `lint`), if at most Limit, else Limit + 1.
unsigned distance(llvm::StringRef A, llvm::StringRef B, unsigned Limit) {
  size_t N = A.size(), M = B.size();
  if ((N > M ? N - M : M - N) > Limit || N > 256 || M > 256)
    return Limit + 1;
  std::vector<unsigned> Prev2(M + 1), Prev(M + 1), Cur(M + 1);
  for (size_t J = 0; J <= M; ++J)
    Prev[J] = unsigned(J);
  for (size_t I = 1; I <= N; ++I) {
    Cur[0] = unsigned(I);
    unsigned RowMin = Cur[0];
    for (size_t J = 1; J <= M; ++J) {
      unsigned Sub = Prev[J - 1] + (A[I - 1] == B[J - 1] ? 0 : 1);
      Cur[J] = std::min({Prev[J] + 1, Cur[J - 1] + 1, Sub});
      if (I > 1 && J > 1 && A[I - 1] == B[J - 2] && A[I - 2] == B[J - 1])
        Cur[J] = std::min(Cur[J], Prev2[J - 2] + 1);
      RowMin = std::min(RowMin, Cur[J]);
    }
    if (RowMin > Limit)
      return Limit + 1;
    std::swap(Prev2, Prev);
    std::swap(Prev, Cur);
  }
  return std::min(Prev[M], Limit + 1);
}

template <typename T>
std::string nearest(llvm::StringRef Name, llvm::ArrayRef<T> Candidates) {
  if (Name.empty() || Candidates.size() > 100000)
    return "";
  std::string NName = normalise(Name);
  // A slip: at most a third of the name (at least 2), and never the whole
  // name.
  auto Limit = [](size_t Len) {
    return unsigned(std::max<size_t>(2, Len / 3));
  };
  std::string Best;
  unsigned BestDist = ~0u;
  for (const T &C : Candidates) {
    llvm::StringRef Cand(C);
    if (Cand == Name)
      continue;
    unsigned L = Limit(Name.size());
    unsigned D = distance(Cand, Name, L);
    if (D > L || D >= Name.size())
      D = ~0u;
    std::string NCand = normalise(Cand);
    unsigned NL = Limit(NName.size());
    unsigned ND = distance(NCand, NName, NL);
    if (ND <= NL && ND < NName.size())
      D = std::min(D, ND);
    if (D < BestDist) {
      BestDist = D;
      Best = Cand.str();
    }
  }
  return BestDist == ~0u ? "" : Best;
}

} // namespace

std::string nearestName(llvm::StringRef Name,
                        llvm::ArrayRef<std::string> Candidates) {
  return nearest(Name, Candidates);
}

std::string nearestName(llvm::StringRef Name,
                        llvm::ArrayRef<llvm::StringRef> Candidates) {
  return nearest(Name, Candidates);
}

} // namespace pps
