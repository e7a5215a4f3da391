//! Integration tests of the charts capability.
