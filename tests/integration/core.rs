//! Integration tests of the core capability.
