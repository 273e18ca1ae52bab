// PersistentCollections: persistent (structurally shared) collections with
// value semantics. Knows nothing about databases.
