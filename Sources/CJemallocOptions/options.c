#include "strata_jemalloc_options.h"
#include <sys/mman.h>

// jemalloc's declarations (of `malloc_conf` too) before the definitions
// below; needed only for the huge pages' hooks.
#if defined(MADV_HUGEPAGE)
#include <jemalloc/jemalloc.h>
#endif

// jemalloc reads this global at its first allocation. A command lives
// seconds: freed pages are kept for the next allocations instead of being
// handed back on a decay timer and faulted in again (`strata export` of
// a million records: 177k page faults with the default decay, 102k
// without, as under glibc with the command's former mallopt settings).
// `used`: nothing in the program reads it but jemalloc.
__attribute__((used)) const char *malloc_conf = "dirty_decay_ms:-1,muzzy_decay_ms:-1";

const char *strata_jemalloc_options(void) { return malloc_conf; }

// Huge pages for the command's heap, asked for at run time by the command
// alone (Sources/strata/main.swift). A command that builds a million-record
// value faults its gigabyte in 4 KiB pages: `strata verify` of the bench's
// store took 243k page faults, 38k with 2 MiB pages, and ran 8% faster. The
// kernel here gives huge pages only to memory marked for them (its THP
// mode `madvise`), and jemalloc's own `thp:always` option, set in
// `malloc_conf` above, would reach every program that links this target:
// the test bundle links the command's module, and its debug run grew from
// 6 GB to 24 GB with it. So the command marks the memory its arenas map,
// through their extent hooks: each new extent larger than a huge page is
// madvised after jemalloc's own hook maps it. An arena's first mappings
// (its first metadata block, its first 2 MiB of data) are a huge page
// each at most and stay in 4 KiB pages, so a short command (`strata log`)
// takes no more memory than before; an arena grows its later mappings
// geometrically (metadata blocks past the first too), and those carry a
// large heap. At most 16 arenas take the hooks (below); the arena jemalloc
// keeps for very large allocations (8 MiB and up) keeps its defaults.
#if defined(MADV_HUGEPAGE) && defined(JEMALLOC_VERSION_MAJOR) && JEMALLOC_VERSION_MAJOR >= 5
#define STRATA_HUGE_PAGES 1
#include <stdio.h>

// jemalloc's default hooks (written once, before any arena uses the copy
// below) and that copy with its `alloc` replaced.
static extent_hooks_t *strata_default_hooks;
static extent_hooks_t strata_huge_page_hooks;

static void *strata_huge_page_alloc(extent_hooks_t *hooks, void *new_addr, size_t size, size_t alignment, bool *zero,
                                    bool *commit, unsigned arena_index) {
    (void)hooks;
    void *address =
        strata_default_hooks->alloc(strata_default_hooks, new_addr, size, alignment, zero, commit, arena_index);
    // Advice only: a kernel without huge pages refuses it, and nothing changes.
    if (address != NULL && size > ((size_t)2 << 20)) (void)madvise(address, size, MADV_HUGEPAGE);
    return address;
}
#endif

int strata_jemalloc_use_huge_pages(void) {
#ifdef STRATA_HUGE_PAGES
    unsigned arenas = 0;
    size_t length = sizeof(arenas);
    // The automatic arenas: four per core by default, each made when
    // written to here (an arena made later would take the default hooks).
    // A thread takes the next arena not yet used, so a command's few
    // threads use the first ones: beyond 16, threads go without.
    if (mallctl("opt.narenas", &arenas, &length, NULL, 0) != 0) return 0;
    if (arenas > 16) arenas = 16;
    int changed = 0;
    for (unsigned i = 0; i < arenas; i++) {
        char name[64];
        snprintf(name, sizeof(name), "arena.%u.extent_hooks", i);
        if (strata_default_hooks == NULL) {
            extent_hooks_t *current = NULL;
            size_t size = sizeof(current);
            if (mallctl(name, &current, &size, NULL, 0) != 0 || current == NULL) return changed;
            strata_huge_page_hooks = *current;
            strata_huge_page_hooks.alloc = strata_huge_page_alloc;
            strata_default_hooks = current;
        }
        extent_hooks_t *hooks = &strata_huge_page_hooks;
        if (mallctl(name, NULL, NULL, &hooks, sizeof(hooks)) == 0) changed += 1;
    }
    return changed;
#else
    return 0;
#endif
}
