//! Integration tests of the limiter capability.
