// Optimal one-to-one assignment maximising total IoU over admissible pairs (IoU >= the caller's threshold).
// The bipartite graph of admissible pairs is split into connected components and each component is solved
// exactly with the Hungarian method: the same optimum as one big matrix (inadmissible pairs contribute
// nothing), but nearly free for scenes of many separate objects, where components are one track and one box.
#pragma once
#include <utility>
#include <vector>

namespace sightflow::track {

// An admissible (row, col) pair and its IoU.
struct Edge {
  int row;
  int col;
  float iou;
};

class Assigner {
 public:
  // rows/cols bound the indices used in edges. Returns (row, col) pairs, a subset of the edges, each row and
  // col at most once, maximising the number of pairs and then their total IoU.
  const std::vector<std::pair<int, int>>& Solve(const std::vector<Edge>& edges, int rows, int cols);

 private:
  std::vector<std::pair<int, int>> matches_;
  std::vector<int> parent_;
  std::vector<int> order_;
  std::vector<int> row_local_, col_local_;
  std::vector<int> comp_rows_, comp_cols_;
  std::vector<double> cost_;
  std::vector<int> assign_;
};

// Minimum-cost assignment of an n x m matrix (n <= m), every row assigned; row_to_col gets n entries.
// O(n^2 m) shortest augmenting paths with potentials (the classic Hungarian/Kuhn-Munkres form).
void Hungarian(const double* cost, int n, int m, std::vector<int>& row_to_col);

}  // namespace sightflow::track
