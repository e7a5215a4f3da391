//! Integration tests of the sweep capability.
