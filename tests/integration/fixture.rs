//! Integration tests of the fixture capability.
