// Builds with `STRATA_INTERNAL_CHECKS` defined (`make test` sets
// STRATA_INTERNAL_CHECKS=1, which Package.swift turns into the flag) check
// the collections' invariants inside every mutation: the nodes on the path
// the mutation changed, and the whole collection when it is small. Other
// builds compile the calls out: `_internalChecks` is a constant the
// optimizer folds, and the checks behind it are never reached.

/// Whether this build checks invariants inside every mutation.
@inlinable @inline(__always)
var _internalChecks: Bool {
    #if STRATA_INTERNAL_CHECKS
    return true
    #else
    return false
    #endif
}

/// Collections of at most this many elements are checked whole after every
/// mutation of a checking build; larger ones along the changed path only
/// (a whole check per mutation would make the tests' large collections
/// quadratic).
@inlinable @inline(__always)
var _wholeCheckLimit: Int { 256 }
