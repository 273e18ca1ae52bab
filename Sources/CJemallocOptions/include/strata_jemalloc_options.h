#ifndef STRATA_JEMALLOC_OPTIONS_H
#define STRATA_JEMALLOC_OPTIONS_H
/// The options the `strata` command gives jemalloc (its `malloc_conf`,
/// defined in options.c and read by jemalloc at the first allocation).
const char *strata_jemalloc_options(void);
/// Asks the kernel for 2 MiB pages for the mappings over 2 MiB that
/// jemalloc's first 16 automatic arenas make from now on (see options.c);
/// returns how many arenas were changed (0 where the platform has no such
/// advice). Called once, by the `strata` command at its start, before its
/// threads allocate.
int strata_jemalloc_use_huge_pages(void);
#endif
