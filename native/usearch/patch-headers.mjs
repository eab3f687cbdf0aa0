// Writes USearch's headers (from the `usearch` npm package, the version package-lock.json pins) with two
// changes into <out-dir>/usearch/ and prints <out-dir>, for binding.gyp and CMakeLists.txt to put first on the
// include path. Usage: node native/usearch/patch-headers.mjs <out-dir>
//
// Why our own build of USearch at all: a search over a 100k x 512-d index spends most of its time waiting on
// memory for each candidate's vector (perf: ~70% of samples on the first load of the distance kernel). The
// npm binary cannot be told to do either of these:
//   1. prefetch: USearch's graph search takes an optional prefetch callback, but its dense index never passes
//      one. We pass one that prefetches the vector of every neighbour about to be measured (hnswlib does the
//      same), so their cache misses overlap instead of queueing.
//   2. huge pages: the index's vectors and nodes live in mmap'd arenas; 4 KiB pages mean a TLB miss on nearly
//      every vector of an index bigger than the TLB reach. Arenas of 8 MiB or more are madvise(MADV_HUGEPAGE)
//      before first touch (honoured when transparent huge pages are "madvise" or "always", Debian's default
//      is "madvise"; a no-op when "never"). Smaller arenas stay on 4 KiB pages, so a small collection does not
//      cost a 2 MiB page per arena.
// Measured on this 2-core EPYC (100k, ef 20, 18 candidates, one thread): 125-137 us a search -> 87-91 us.
// The file format, the graph and the results are unchanged (the same code, plus hints).
//
// Each change asserts its anchor text appears exactly as expected, so a USearch upgrade that moves the code
// fails the build loudly instead of silently losing the optimisation.
import { fileURLToPath } from 'node:url';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

const out = resolve(process.argv[2] ?? 'build/usearch-include');
const src = fileURLToPath(new URL('../../node_modules/usearch/include/usearch', import.meta.url));

/** Replaces `anchor` (which must occur exactly `times` times) with `replacement`. */
function patch(text, file, anchor, replacement, times = 1) {
  const found = text.split(anchor).length - 1;
  if (found !== times) throw new Error(`usearch ${file}: expected ${times} occurrence(s) of ${JSON.stringify(anchor.slice(0, 80))}, found ${found}; update native/usearch/patch-headers.mjs for this USearch version`);
  return text.split(anchor).join(replacement);
}

const files = {
  'index.hpp': (t) => t,
  'index_plugins.hpp': (t) => patch(t, 'index_plugins.hpp',
    '        auto* result = mmap(NULL, count_bytes, PROT_WRITE | PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);\n',
    '        auto* result = mmap(NULL, count_bytes, PROT_WRITE | PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);\n' +
    '#if defined(MADV_HUGEPAGE) // sightflow: big arenas on transparent huge pages (native/usearch/patch-headers.mjs)\n' +
    '        if (result != MAP_FAILED && count_bytes >= (std::size_t(8) << 20))\n' +
    '            madvise(result, count_bytes, MADV_HUGEPAGE);\n' +
    '#endif\n'),
  'index_dense.hpp': (t) => {
    t = patch(t, 'index_dense.hpp',
      '    template <typename scalar_at, typename predicate_at>\n    search_result_t search_(',
      '    /// sightflow: prefetches the vectors of the candidates the graph search is about to measure\n' +
      '    /// (native/usearch/patch-headers.mjs). Works on both iterator kinds the search passes.\n' +
      '    struct vectors_prefetch_t {\n' +
      '        byte_t* const* lookup;\n' +
      '        std::size_t bytes;\n' +
      '        template <typename iterator_at> void operator()(iterator_at begin, iterator_at end) const noexcept {\n' +
      '            for (; begin != end; ++begin) {\n' +
      '                byte_t const* vector = lookup[get_slot(begin)];\n' +
      '                for (std::size_t offset = 0; offset < bytes; offset += 64)\n' +
      '                    usearch_prefetch_m(vector + offset);\n' +
      '            }\n' +
      '        }\n' +
      '    };\n\n' +
      '    template <typename scalar_at, typename predicate_at>\n    search_result_t search_(');
    return patch(t, 'index_dense.hpp',
      'auto typed_result = typed_->search(vector_data, wanted, metric_proxy_t{*this}, search_config, allow);',
      'auto typed_result = typed_->search(vector_data, wanted, metric_proxy_t{*this}, search_config, allow,\n' +
      '                                              vectors_prefetch_t{vectors_lookup_.data(), metric_.bytes_per_vector()});',
      2);
  },
};

mkdirSync(join(out, 'usearch'), { recursive: true });
for (const [name, change] of Object.entries(files)) {
  const text = change(readFileSync(join(src, name), 'utf8'));
  const target = join(out, 'usearch', name);
  // Unchanged output keeps its mtime, so incremental builds do not recompile.
  if (!existsSync(target) || readFileSync(target, 'utf8') !== text) writeFileSync(target, text);
}
process.stdout.write(out);
