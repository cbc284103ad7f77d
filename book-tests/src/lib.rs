//! Tests of the built book live in .
