// CPU sort, topk, unique and searchsorted (sort_keys.h). Each row is sorted
// as (key, index) pairs (NOTE [ Sort keys ]): std::stable_sort for sort and
// unique, std::nth_element then std::sort of the k best for topk (ties by
// the lower index, so the result is the one a stable sort would give). The
// values written are the input's elements at the sorted indices, bit for bit.
// Rows are spread over gx::parallel_for, each row on one thread, so results
// do not depend on the thread count.
#include <gpuext/parallel.h>

#include <algorithm>
#include <vector>

#include "../common/dispatch.h"
#include "searchsorted.h"
#include "sort_keys.h"
#include "unique_args.h"

namespace gx::ops {
namespace {

using sortkey::Codec;
using sortkey::load_bits;
using sortkey::store_bits;

template <typename K> struct Item {
  K key;
  int64_t idx;
};

// Rows per parallel chunk: at least kDefaultGrain elements (NOTE [ Parallel grain ]).
int64_t row_grain(int64_t n) { return std::max<int64_t>(1, kDefaultGrain / std::max<int64_t>(1, n)); }

// The (key ^ flip, index) pairs of one row.
template <typename K> void keys_of_row(const char* row, const Codec& c, int64_t n, K flip, std::vector<Item<K>>& items) {
  items.resize(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) items[j] = {static_cast<K>(c.encode(load_bits(row + j * c.item, c.item))) ^ flip, j};
}

// The first `count` items' elements (from `row`) and indices into values / indices.
template <typename K>
void write_row(const char* row, const Codec& c, const std::vector<Item<K>>& items, int64_t count, char* values,
               int64_t* indices) {
  for (int64_t j = 0; j < count; ++j) {
    const int64_t id = items[j].idx;
    store_bits(values + j * c.item, c.item, load_bits(row + id * c.item, c.item));
    indices[j] = id;
  }
}

template <typename K>
void sort_rows(const char* x, const Codec& c, const Rows& r, bool descending, char* values, int64_t* indices) {
  const K flip = descending ? static_cast<K>(c.mask()) : K(0);
  parallel_for(0, r.rows, row_grain(r.n), [&](int64_t b, int64_t e) {
    std::vector<Item<K>> items;
    for (int64_t row = b; row < e; ++row) {
      const char* in = x + row * r.n * c.item;
      keys_of_row(in, c, r.n, flip, items);
      std::stable_sort(items.begin(), items.end(), [](const Item<K>& p, const Item<K>& q) { return p.key < q.key; });
      write_row(in, c, items, r.n, values + row * r.n * c.item, indices + row * r.n);
    }
  });
}

template <typename K>
void topk_rows(const char* x, const Codec& c, const Rows& r, int64_t k, bool largest, char* values, int64_t* indices) {
  // Larger keys first (smallest: flipped keys), then the lower index.
  const K flip = largest ? K(0) : static_cast<K>(c.mask());
  const auto better = [](const Item<K>& p, const Item<K>& q) { return p.key > q.key || (p.key == q.key && p.idx < q.idx); };
  parallel_for(0, r.rows, row_grain(r.n), [&](int64_t b, int64_t e) {
    std::vector<Item<K>> items;
    for (int64_t row = b; row < e; ++row) {
      const char* in = x + row * r.n * c.item;
      keys_of_row(in, c, r.n, flip, items);
      if (k < r.n) std::nth_element(items.begin(), items.begin() + (k - 1), items.end(), better);
      std::sort(items.begin(), items.begin() + k, better);
      write_row(in, c, items, k, values + row * k * c.item, indices + row * k);
    }
  });
}

template <typename K>
int64_t unique_flat(const char* x, const Codec& c, int64_t n, char* values, int64_t* inverse, int64_t* counts) {
  std::vector<Item<K>> items;
  keys_of_row(x, c, n, K(0), items);
  std::stable_sort(items.begin(), items.end(), [](const Item<K>& p, const Item<K>& q) { return p.key < q.key; });
  int64_t m = 0;
  for (int64_t i = 0; i < n; ++i) {
    const K key = items[i].key;
    // A new value where the key changes; every NaN is its own (NaN != NaN, as torch.unique has it).
    if (i == 0 || key != items[i - 1].key || c.nan(key)) {
      store_bits(values + m * c.item, c.item, load_bits(x + items[i].idx * c.item, c.item));
      if (counts != nullptr) counts[m] = 0;
      ++m;
    }
    if (counts != nullptr) ++counts[m - 1];
    if (inverse != nullptr) inverse[items[i].idx] = m - 1;
  }
  return m;
}

}  // namespace

void sort_cpu(const Tensor& self, bool descending, const Tensor& values, const Tensor& indices) {
  const Rows r = rows_of(self, "sort");
  check_rows_out(self, values, r.n, self.dtype(), "sort", "values");
  check_rows_out(self, indices, r.n, kInt64, "sort", "indices");
  if (r.rows == 0 || r.n == 0) return;
  const Codec c = sortkey::codec_of(self.dtype());
  const char* x = static_cast<const char*>(self.data_ptr());
  char* v = static_cast<char*>(values.data_ptr());
  auto* i = static_cast<int64_t*>(indices.data_ptr());
  if (c.bits <= 32) sort_rows<uint32_t>(x, c, r, descending, v, i);
  else sort_rows<uint64_t>(x, c, r, descending, v, i);
}

void topk_cpu(const Tensor& self, int64_t k, bool largest, const Tensor& values, const Tensor& indices) {
  const Rows r = rows_of(self, "topk");
  GX_CHECK(k >= 0 && k <= r.n, "topk: k (", k, ") must be in [0, ", r.n, "], the length of the rows");
  check_rows_out(self, values, k, self.dtype(), "topk", "values");
  check_rows_out(self, indices, k, kInt64, "topk", "indices");
  if (r.rows == 0 || k == 0) return;
  const Codec c = sortkey::codec_of(self.dtype());
  const char* x = static_cast<const char*>(self.data_ptr());
  char* v = static_cast<char*>(values.data_ptr());
  auto* i = static_cast<int64_t*>(indices.data_ptr());
  if (c.bits <= 32) topk_rows<uint32_t>(x, c, r, k, largest, v, i);
  else topk_rows<uint64_t>(x, c, r, k, largest, v, i);
}

int64_t unique_cpu(const Tensor& self, const std::optional<Tensor>& inverse, const std::optional<Tensor>& counts,
                   const Tensor& values) {
  const int64_t n = unique_args::check(self, inverse, counts, values);
  if (n == 0) return 0;
  const Codec c = sortkey::codec_of(self.dtype());
  const char* x = static_cast<const char*>(self.data_ptr());
  char* v = static_cast<char*>(values.data_ptr());
  auto* inv = inverse ? static_cast<int64_t*>(inverse->data_ptr()) : nullptr;
  auto* cnt = counts ? static_cast<int64_t*>(counts->data_ptr()) : nullptr;
  return c.bits <= 32 ? unique_flat<uint32_t>(x, c, n, v, inv, cnt) : unique_flat<uint64_t>(x, c, n, v, inv, cnt);
}

void searchsorted_cpu(const Tensor& sorted_sequence, const Tensor& self, bool right, const Tensor& out) {
  const SearchShape s = search_shape(sorted_sequence, self, out);
  const ScalarType dt = self.dtype();
  const int64_t item = itemsize(dt), total = s.rows * s.k;
  const char* seq = static_cast<const char*>(sorted_sequence.data_ptr());
  const char* vals = static_cast<const char*>(self.data_ptr());
  const bool out32 = out.dtype() == kInt32;
  char* o = static_cast<char*>(out.data_ptr());
  with_compute<kCNumeric>(dt, [&](auto tag) {
    using C = typename decltype(tag)::type;
    // About log2(m) loads per element: the grain shrinks with them.
    int64_t steps = 1;
    while ((int64_t{1} << steps) < s.m && steps < 62) ++steps;
    const int64_t grain = std::max<int64_t>(1, kDefaultGrain / (4 + steps));
    parallel_for(0, total, grain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const int64_t row = i / std::max<int64_t>(1, s.k);
        const char* sr = seq + (s.shared ? 0 : row) * s.m * item;
        const int64_t pos = search_row<C>(sr, dt, item, s.m, load_as<C>(vals + i * item, dt), right);
        if (out32) reinterpret_cast<int32_t*>(o)[i] = static_cast<int32_t>(pos);
        else reinterpret_cast<int64_t*>(o)[i] = pos;
      }
    });
  });
}

}  // namespace gx::ops
