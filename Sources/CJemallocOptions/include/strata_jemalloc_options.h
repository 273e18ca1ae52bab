#ifndef STRATA_JEMALLOC_OPTIONS_H
#define STRATA_JEMALLOC_OPTIONS_H
/// The options the `strata` command gives jemalloc (its `malloc_conf`,
/// defined in options.c and read by jemalloc at the first allocation).
const char *strata_jemalloc_options(void);
#endif
