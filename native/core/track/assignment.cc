#include "assignment.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace sightflow::track {
namespace {

int Find(std::vector<int>& parent, int i) {
  while (parent[static_cast<size_t>(i)] != i) {
    parent[static_cast<size_t>(i)] = parent[static_cast<size_t>(parent[static_cast<size_t>(i)])];
    i = parent[static_cast<size_t>(i)];
  }
  return i;
}

}  // namespace

void Hungarian(const double* cost, int n, int m, std::vector<int>& row_to_col) {
  const double inf = std::numeric_limits<double>::infinity();
  // 1-based arrays as in the textbook formulation; column 0 is the virtual start.
  std::vector<double> u(static_cast<size_t>(n) + 1, 0.0), v(static_cast<size_t>(m) + 1, 0.0), minv(static_cast<size_t>(m) + 1);
  std::vector<int> p(static_cast<size_t>(m) + 1, 0), way(static_cast<size_t>(m) + 1, 0);
  std::vector<char> used(static_cast<size_t>(m) + 1);
  for (int i = 1; i <= n; ++i) {
    p[0] = i;
    int j0 = 0;
    std::fill(minv.begin(), minv.end(), inf);
    std::fill(used.begin(), used.end(), 0);
    do {
      used[static_cast<size_t>(j0)] = 1;
      const int i0 = p[static_cast<size_t>(j0)];
      double delta = inf;
      int j1 = 0;
      for (int j = 1; j <= m; ++j) {
        if (used[static_cast<size_t>(j)]) continue;
        const double cur = cost[static_cast<size_t>(i0 - 1) * static_cast<size_t>(m) + static_cast<size_t>(j - 1)] -
                           u[static_cast<size_t>(i0)] - v[static_cast<size_t>(j)];
        if (cur < minv[static_cast<size_t>(j)]) {
          minv[static_cast<size_t>(j)] = cur;
          way[static_cast<size_t>(j)] = j0;
        }
        if (minv[static_cast<size_t>(j)] < delta) {
          delta = minv[static_cast<size_t>(j)];
          j1 = j;
        }
      }
      for (int j = 0; j <= m; ++j) {
        if (used[static_cast<size_t>(j)]) {
          u[static_cast<size_t>(p[static_cast<size_t>(j)])] += delta;
          v[static_cast<size_t>(j)] -= delta;
        } else {
          minv[static_cast<size_t>(j)] -= delta;
        }
      }
      j0 = j1;
    } while (p[static_cast<size_t>(j0)] != 0);
    do {
      const int j1 = way[static_cast<size_t>(j0)];
      p[static_cast<size_t>(j0)] = p[static_cast<size_t>(j1)];
      j0 = j1;
    } while (j0 != 0);
  }
  row_to_col.assign(static_cast<size_t>(n), -1);
  for (int j = 1; j <= m; ++j)
    if (p[static_cast<size_t>(j)] != 0) row_to_col[static_cast<size_t>(p[static_cast<size_t>(j)] - 1)] = j - 1;
}

const std::vector<std::pair<int, int>>& Assigner::Solve(const std::vector<Edge>& edges, int rows, int cols) {
  matches_.clear();
  if (edges.empty()) return matches_;
  // Union-find over rows [0, rows) and cols [rows, rows + cols).
  parent_.resize(static_cast<size_t>(rows + cols));
  std::iota(parent_.begin(), parent_.end(), 0);
  for (const Edge& e : edges) {
    const int a = Find(parent_, e.row), b = Find(parent_, rows + e.col);
    if (a != b) parent_[static_cast<size_t>(a)] = b;
  }
  // Edges grouped by component root.
  order_.resize(edges.size());
  std::iota(order_.begin(), order_.end(), 0);
  std::vector<int> root(edges.size());
  for (size_t k = 0; k < edges.size(); ++k) root[k] = Find(parent_, edges[k].row);
  std::sort(order_.begin(), order_.end(), [&](int a, int b) {
    return root[static_cast<size_t>(a)] != root[static_cast<size_t>(b)] ? root[static_cast<size_t>(a)] < root[static_cast<size_t>(b)] : a < b;
  });
  row_local_.assign(static_cast<size_t>(rows), -1);
  col_local_.assign(static_cast<size_t>(cols), -1);
  size_t begin = 0;
  while (begin < order_.size()) {
    size_t end = begin + 1;
    const int r0 = root[static_cast<size_t>(order_[begin])];
    while (end < order_.size() && root[static_cast<size_t>(order_[end])] == r0) ++end;
    if (end - begin == 1) {  // the common case: one track, one detection
      const Edge& e = edges[static_cast<size_t>(order_[begin])];
      matches_.emplace_back(e.row, e.col);
      begin = end;
      continue;
    }
    comp_rows_.clear();
    comp_cols_.clear();
    for (size_t k = begin; k < end; ++k) {
      const Edge& e = edges[static_cast<size_t>(order_[k])];
      if (row_local_[static_cast<size_t>(e.row)] < 0) {
        row_local_[static_cast<size_t>(e.row)] = static_cast<int>(comp_rows_.size());
        comp_rows_.push_back(e.row);
      }
      if (col_local_[static_cast<size_t>(e.col)] < 0) {
        col_local_[static_cast<size_t>(e.col)] = static_cast<int>(comp_cols_.size());
        comp_cols_.push_back(e.col);
      }
    }
    // Hungarian wants n <= m: transpose when the component has more rows than columns.
    const bool transpose = comp_rows_.size() > comp_cols_.size();
    const int n = static_cast<int>(transpose ? comp_cols_.size() : comp_rows_.size());
    const int m = static_cast<int>(transpose ? comp_rows_.size() : comp_cols_.size());
    // Inadmissible pairs cost the same as staying unmatched (1 - 0), so they never win over a real pair.
    cost_.assign(static_cast<size_t>(n) * static_cast<size_t>(m), 1.0);
    for (size_t k = begin; k < end; ++k) {
      const Edge& e = edges[static_cast<size_t>(order_[k])];
      const int lr = row_local_[static_cast<size_t>(e.row)], lc = col_local_[static_cast<size_t>(e.col)];
      const size_t at = transpose ? static_cast<size_t>(lc) * static_cast<size_t>(m) + static_cast<size_t>(lr)
                                  : static_cast<size_t>(lr) * static_cast<size_t>(m) + static_cast<size_t>(lc);
      cost_[at] = std::min(cost_[at], 1.0 - static_cast<double>(e.iou));
    }
    Hungarian(cost_.data(), n, m, assign_);
    for (int i = 0; i < n; ++i) {
      const int j = assign_[static_cast<size_t>(i)];
      if (j < 0 || cost_[static_cast<size_t>(i) * static_cast<size_t>(m) + static_cast<size_t>(j)] >= 1.0) continue;
      const int r = transpose ? comp_rows_[static_cast<size_t>(j)] : comp_rows_[static_cast<size_t>(i)];
      const int c = transpose ? comp_cols_[static_cast<size_t>(i)] : comp_cols_[static_cast<size_t>(j)];
      matches_.emplace_back(r, c);
    }
    for (int r : comp_rows_) row_local_[static_cast<size_t>(r)] = -1;
    for (int c : comp_cols_) col_local_[static_cast<size_t>(c)] = -1;
    begin = end;
  }
  return matches_;
}

}  // namespace sightflow::track
