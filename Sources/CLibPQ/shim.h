#ifndef STRATA_CLIBPQ_SHIM_H
#define STRATA_CLIBPQ_SHIM_H
// libpq, PostgreSQL's own client library (Debian: libpq-dev; macOS: brew
// install libpq). pkg-config's libpq module puts its directory on the
// include path.
#include <libpq-fe.h>
#endif
