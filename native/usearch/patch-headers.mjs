// Writes USearch's headers (from the `usearch` npm package, the version package-lock.json pins) with three
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
// The third change is a fix, for inserts on several threads (VectorIndex::Add splits a batch over threads).
// index_gt::add links a new node level by level, top down: at each level it clears and forms the node's own
// list, then adds the reverse links from those neighbours. After the reverse links of its top level, another
// thread's search can reach the node and descend through it into a lower level whose list is still empty;
// that thread then links the node as its only neighbour there and adds itself to the node's list, which this
// add clears a moment later. The other node is left with no incoming link on that level: an orphan that no
// search finds. The patched add forms the node's lists on every level first and only then adds the reverse
// links, so no thread reaches a node before its lists are complete. On one thread the graph is byte for byte
// the same (each reverse link touches one neighbour's list alone, so their order does not matter; checked on
// a 20k index with removals). Measured with 300 random 32-d vectors, 2 threads, each vector's top-1 search
// at ef 64 having to return itself: unpatched, 173 of 1000 builds missed 1-10 vectors; patched, none of 2800
// builds (2, 3 and 4 threads, 300 and 1000 vectors) missed any.
//
// Each change asserts its anchor text appears exactly as expected, so a USearch upgrade that moves the code
// fails the build loudly instead of silently losing the change.
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
  'index.hpp': (t) => patch(t, 'index.hpp',
    '        // From `new_target_level` down - perform proper extensive search\n' +
    '        for (level_t level = (std::min)(new_target_level, max_level_copy); level >= 0; --level) {\n' +
    '            // TODO: Handle out of memory conditions\n' +
    '            search_to_insert_(value, metric, prefetch, closest_slot, level, config.expansion, context);\n' +
    '            candidates_view_t closest_view;\n' +
    '            {\n' +
    '                node_lock_t new_lock = node_lock_(new_slot);\n' +
    '                neighbors_(new_node, level).clear();\n' +
    '                closest_view = form_links_to_closest_(metric, new_slot, level, context);\n' +
    '                closest_slot = closest_view[0].slot;\n' +
    '            }\n' +
    '            form_reverse_links_(metric, new_slot, closest_view, value, level, context);\n' +
    '        }\n',
    '        // sightflow: every level\'s outgoing links first, then the reverse links that make the new node\n' +
    '        // reachable (native/usearch/patch-headers.mjs). Until then no other thread can reach it, so none\n' +
    '        // descends into a level whose list is still empty and links to it there, only to lose that link\n' +
    '        // when the list is cleared and formed here.\n' +
    '        level_t const linked_level = (std::min)(new_target_level, max_level_copy);\n' +
    '        for (level_t level = linked_level; level >= 0; --level) {\n' +
    '            // TODO: Handle out of memory conditions\n' +
    '            search_to_insert_(value, metric, prefetch, closest_slot, level, config.expansion, context);\n' +
    '            node_lock_t new_lock = node_lock_(new_slot);\n' +
    '            neighbors_(new_node, level).clear();\n' +
    '            candidates_view_t closest_view = form_links_to_closest_(metric, new_slot, level, context);\n' +
    '            closest_slot = closest_view[0].slot;\n' +
    '        }\n' +
    '        for (level_t level = linked_level; level >= 0; --level) {\n' +
    '            // A copy of this level\'s list (the reverse links lock other nodes, one lock at a time); nodes\n' +
    '            // that linked back to the new node since it became reachable are in it too, and already hold\n' +
    '            // a link to it. Only the slots are read, the distances just keep the order.\n' +
    '            top.clear();\n' +
    '            {\n' +
    '                node_lock_t new_lock = node_lock_(new_slot);\n' +
    '                neighbors_ref_t links = neighbors_(new_node, level);\n' +
    '                for (std::size_t idx = 0; idx != links.size(); ++idx)\n' +
    '                    top.insert_reserved({static_cast<distance_t>(idx), links[idx]});\n' +
    '            }\n' +
    '            form_reverse_links_(metric, new_slot, candidates_view_t{top.data(), top.size()}, value, level, context);\n' +
    '        }\n'),
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
