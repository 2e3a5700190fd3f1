// Copyright 2026 The cuhal Authors.
// The translation unit that builds the test programs' precompiled header (cuhal_test_pch in
// tests/CMakeLists.txt: GoogleTest, GoogleMock, cuda.h and the standard headers most tests
// include). Nothing else.
